"""Multi-facet codebook embeddings (Chang, Agrawal & McCallum, AAAI 2021): self-contained model folder."""
