"""The training workflow, from the recipe down: :mod:`.recipe` (a recipe in, its model out: one run, or one run per
seed averaged by :mod:`.soup`) > :mod:`.one_run` (build the model and task, train, the card's facts) > :mod:`.loop`
(the loop every method trains with); beside them the checkpoints, the resume guard, the dev-suite selection and
the method's last step before export."""
