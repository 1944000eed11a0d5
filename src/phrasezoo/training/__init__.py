"""Accelerate training loop shared by every method of the zoo."""
