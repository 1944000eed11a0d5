"""PEARL's real alias pairs: Wikipedia links and leads, WordNet names and the name benchmark's training entities."""
