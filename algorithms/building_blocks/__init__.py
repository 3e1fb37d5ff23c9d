"""The classic DP building blocks (randomized response, Laplace, Gaussian, exponential mechanism,
...) as registered mechanisms."""

from ..building_blocks import mechanisms  # noqa: F401  (registration)
