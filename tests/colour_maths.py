"""The colour maths of tests/test_colour_checks.py, which checks the state colours (float64, numpy only).

- sRGB ↔ linear RGB (IEC 61966-2-1), relative luminance and contrast ratio (WCAG 2.1);
- colour-vision deficiency simulated by Machado, Oliveira & Fernandes (2009) at full severity,
  their 3×3 matrices applied to linear RGB (then clipped to the displayable cube);
- CIELAB (the D65 illuminant) and the CIEDE2000 colour difference (Sharma, Wu & Dalal 2005).

Colours are ``#RRGGBB`` strings or arrays of sRGB values in [0, 1] with the channels last.
"""

from __future__ import annotations

import numpy as np

#: Machado et al. 2009, severity 1.0: linear RGB → linear RGB as seen with each deficiency.
MACHADO: dict[str, np.ndarray] = {
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
        dtype=np.float64,
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
        dtype=np.float64,
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
        dtype=np.float64,
    ),
}

#: Linear sRGB → CIE XYZ (D65), and the D65 white point in XYZ (Y = 1).
_RGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]],
    dtype=np.float64,
)
_WHITE = _RGB_TO_XYZ.sum(axis=1)


def srgb(colour: str) -> np.ndarray:
    """``#RRGGBB`` as three sRGB values in [0, 1]."""
    text = colour.strip().lstrip("#")
    if len(text) == 3:
        text = "".join(ch * 2 for ch in text)
    if len(text) != 6:
        raise ValueError(f"not a #RRGGBB colour: {colour!r}")
    return np.array([int(text[i : i + 2], 16) for i in (0, 2, 4)], dtype=np.float64) / 255.0


def to_linear(rgb: np.ndarray) -> np.ndarray:
    """sRGB values in [0, 1] → linear light."""
    c = np.asarray(rgb, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def to_srgb(linear: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] → sRGB values (the inverse of :func:`to_linear`)."""
    c = np.clip(np.asarray(linear, dtype=np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def luminance(colour: str) -> float:
    """WCAG relative luminance of `colour`."""
    return float(to_linear(srgb(colour)) @ np.array([0.2126, 0.7152, 0.0722], dtype=np.float64))


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours, from 1 (the same) to 21 (the darkest on the lightest)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def simulate(colour: str, deficiency: str) -> np.ndarray:
    """Linear RGB of `colour` as seen with `deficiency` (a key of :data:`MACHADO`), in the cube."""
    return np.clip(MACHADO[deficiency] @ to_linear(srgb(colour)), 0.0, 1.0)


def lab(linear: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of linear RGB values (channels last)."""
    xyz = np.asarray(linear, dtype=np.float64) @ _RGB_TO_XYZ.T / _WHITE
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1
    )


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 difference of CIELAB colours (kL = kC = kH = 1), following Sharma et al. 2005."""
    l1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=np.float64), -1, 0)
    l2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=np.float64), -1, 0)
    c_mean7 = ((np.hypot(a1, b1) + np.hypot(a2, b2)) / 2) ** 7
    g = 0.5 * (1 - np.sqrt(c_mean7 / (c_mean7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.where(c1p == 0, 0.0, np.degrees(np.arctan2(b1, a1p)) % 360)
    h2p = np.where(c2p == 0, 0.0, np.degrees(np.arctan2(b2, a2p)) % 360)
    neutral = c1p * c2p == 0
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(neutral, 0.0, dh)
    d_l, d_c = l2 - l1, c2p - c1p
    d_h = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    h_sum = h1p + h2p
    far = np.abs(h1p - h2p) > 180
    h_mean = np.where(far, np.where(h_sum < 360, h_sum + 360, h_sum - 360), h_sum) / 2
    h_mean = np.where(neutral, h_sum, h_mean)
    t = (
        1
        - 0.17 * np.cos(np.radians(h_mean - 30))
        + 0.24 * np.cos(np.radians(2 * h_mean))
        + 0.32 * np.cos(np.radians(3 * h_mean + 6))
        - 0.20 * np.cos(np.radians(4 * h_mean - 63))
    )
    d_theta = 30 * np.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * c_mean
    s_h = 1 + 0.015 * c_mean * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    x, y, z = d_l / s_l, d_c / s_c, d_h / s_h
    return np.sqrt(x**2 + y**2 + z**2 + r_t * y * z)


def difference(a: str, b: str, deficiency: str | None = None) -> float:
    """CIEDE2000 between two colours, as seen with `deficiency` (None: normal vision)."""
    if deficiency is None:
        la, lb = lab(to_linear(srgb(a))), lab(to_linear(srgb(b)))
    else:
        la, lb = lab(simulate(a, deficiency)), lab(simulate(b, deficiency))
    return float(ciede2000(la, lb))


def closest_pair(colours: dict[str, str], deficiency: str | None = None) -> tuple[float, str, str]:
    """The smallest CIEDE2000 between two of `colours` (name → colour) and that pair's names."""
    names = list(colours)
    pairs = [
        (difference(colours[x], colours[y], deficiency), x, y)
        for i, x in enumerate(names)
        for y in names[i + 1 :]
    ]
    if not pairs:
        raise ValueError("closest_pair needs at least two colours.")
    return min(pairs)
