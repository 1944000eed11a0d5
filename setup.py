"""Build hook: ship the top-level recipes (``hub_configs/*.yaml``) and model-card templates (``model_cards/*.md``)
inside the package, so that an installed wheel finds them as ``phrasezoo/hub_configs`` and ``phrasezoo/model_cards``
(:func:`phrasezoo.core.files.shipped_folder`). In a checkout (and an editable install) the code reads the top-level
folders themselves. Everything else about the build is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

#: top-level folder -> file pattern, copied to ``<build>/phrasezoo/<folder>/``
SHIPPED = {"hub_configs": "*.yaml", "model_cards": "*.md"}


class BuildPyWithShippedFolders(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's folders
        root = Path(__file__).resolve().parent
        for folder, pattern in SHIPPED.items():
            files = sorted((root / folder).glob(pattern))
            if not files:
                raise FileNotFoundError(f"{root / folder} holds no {pattern}: nothing to ship.")
            target = Path(self.build_lib) / "phrasezoo" / folder
            self.mkpath(str(target))
            for file in files:
                self.copy_file(str(file), str(target / file.name))


setup(cmdclass={"build_py": BuildPyWithShippedFolders})
