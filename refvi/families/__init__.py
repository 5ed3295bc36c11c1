"""Variational families: the Gaussian (m, C) with structure full / tril / sym / diag, and location-scale families."""

# re-exports (F401): the submodules and their public names are refvi.families' API
from refvi.families import bases, gaussian, location_scale  # noqa: F401
from refvi.families.bases import (  # noqa: F401
    AffineBase,
    CenteredExponentialBase,
    GaussianBase,
    LaplaceBase,
    RademacherBase,
    StudentTBase,
    TwoPointBase,
    UniformBase,
    get_base,
    shifted_gaussian,
    standardize,
    student_t_shape,
)
from refvi.families.location_scale import LocationScale, standardized_family, to_base_params  # noqa: F401
