"""The training workflow, from the recipe down: :mod:`.recipe` (a recipe in, its model out: one run or a soup)
> :mod:`.soup` (the seeds' runs averaged) > :mod:`.one_run` (build model and task, train, card facts) > :mod:`.loop`
(the loop every method trains with); beside them the checkpoints, the resume guard, the dev-suite selection and the
method's last step before export."""
