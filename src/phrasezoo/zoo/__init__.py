"""The zoo: the registry of methods (found in methods/<name>/) and the training-task assembler they share."""
