"""Applications built on the zoo's phrase encoders (topic mining, ...)."""
