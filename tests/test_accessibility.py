"""Accessibility of the course's colours and type.

Colour-vision deficiency is simulated with the severity-1.0 matrices of Machado, Oliveira and
Fernandes (2009), "A physiologically-based model for simulation of color vision deficiency"
(applied to linear sRGB). Distances are CIEDE2000 (Sharma, Wu and Dalal 2005, whose published
test pairs check the implementation below). Slider labels are checked in the browser tests.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from attnlib.plots import CYCLE, PALETTE, PROJECTOR_RC, SCALED, UNSCALED

MACHADO_2009 = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
VISIONS = ["normal", *MACHADO_2009]
# Minimum CIEDE2000 distance: raw vs scaled must stand far apart; any two cycle colours must
# stay clearly apart (about 4x the just-noticeable difference of ~2.3) for every vision.
MIN_KEY_PAIR = 30.0
MIN_CYCLE_PAIR = 9.0


def hex_to_srgb(color: str) -> np.ndarray:
    color = color.lstrip("#")
    return np.array([int(color[i:i + 2], 16) for i in (0, 2, 4)]) / 255.0


def to_linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def to_gamma(c: np.ndarray) -> np.ndarray:
    c = np.clip(c, 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def simulate(color: str, vision: str) -> np.ndarray:
    """sRGB (0..1) of `color` as seen with `vision` ('normal' or a Machado 2009 dichromacy)."""
    rgb = hex_to_srgb(color)
    if vision == "normal":
        return rgb
    return to_gamma(np.asarray(MACHADO_2009[vision]) @ to_linear(rgb))


def srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour in 0..1."""
    m = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = m @ to_linear(rgb) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def ciede2000(lab1, lab2) -> float:
    """CIEDE2000 colour difference (kL = kC = kH = 1), after Sharma, Wu and Dalal (2005)."""
    L1, a1, b1 = lab1
    L2, a2, b2 = lab2
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360 if c2p else 0.0
    dL, dC = L2 - L1, c2p - c1p
    dh = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    dH = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    L_bar, cp_bar = (L1 + L2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
         + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    s_l = 1 + 0.015 * (L_bar - 50) ** 2 / np.sqrt(20 + (L_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    r_t = (-2 * np.sqrt(cp_bar**7 / (cp_bar**7 + 25.0**7))
           * np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2)))))
    return float(np.sqrt((dL / s_l) ** 2 + (dC / s_c) ** 2 + (dH / s_h) ** 2 + r_t * (dC / s_c) * (dH / s_h)))


def seen_distance(c1: str, c2: str, vision: str) -> float:
    return ciede2000(srgb_to_lab(simulate(c1, vision)), srgb_to_lab(simulate(c2, vision)))


def relative_luminance(color: str) -> float:
    return float(np.array([0.2126, 0.7152, 0.0722]) @ to_linear(hex_to_srgb(color)))


def contrast_with_white(color: str) -> float:
    """WCAG 2 contrast ratio of a colour against a white background."""
    return 1.05 / (relative_luminance(color) + 0.05)


# --- the tools checked against published reference values ---------------------------------------

@pytest.mark.parametrize("lab1, lab2, expected", [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),  # Sharma et al. 2005, pair 1
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),  # pair 7
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),  # pair 17
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),  # pair 25
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),  # pair 34
])
def test_ciede2000_matches_sharma_2005(lab1, lab2, expected):
    assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(lab2, lab1) == pytest.approx(expected, abs=1e-4)


def test_lab_of_reference_colours():
    assert srgb_to_lab(np.ones(3)) == pytest.approx([100.0, 0.0, 0.0], abs=0.01)
    assert srgb_to_lab(hex_to_srgb("#FF0000")) == pytest.approx([53.24, 80.09, 67.20], abs=0.02)


@pytest.mark.parametrize("vision", list(MACHADO_2009))
def test_simulation_keeps_greys_and_merges_what_it_should(vision):
    for grey in ("#000000", "#808080", "#FFFFFF"):
        assert simulate(grey, vision) == pytest.approx(hex_to_srgb(grey), abs=1e-4)
    # A red/green pair that normal vision separates well collapses for red-green dichromats.
    normal = seen_distance("#D81B1B", "#3C8C1E", "normal")
    seen = seen_distance("#D81B1B", "#3C8C1E", vision)
    if vision == "tritanopia":
        assert seen > 0.5 * normal
    else:
        assert seen < 0.5 * normal


# --- the course palette -------------------------------------------------------------------------

@pytest.mark.parametrize("vision", VISIONS)
def test_unscaled_and_scaled_stay_far_apart(vision):
    assert UNSCALED != SCALED
    assert seen_distance(UNSCALED, SCALED, vision) > MIN_KEY_PAIR


@pytest.mark.parametrize("vision", VISIONS)
def test_every_pair_of_cycle_colours_is_distinguishable(vision):
    assert len(set(CYCLE)) == len(CYCLE) and set(CYCLE) <= set(PALETTE.values())
    close = [(c1, c2, round(seen_distance(c1, c2, vision), 1)) for c1, c2 in itertools.combinations(CYCLE, 2)
             if seen_distance(c1, c2, vision) <= MIN_CYCLE_PAIR]
    assert close == [], f"cycle colours too close under {vision}: {close}"


def test_raw_and_scaled_colours_stand_out_on_white():
    """WCAG 2.1 non-text contrast (1.4.11): at least 3:1 for the two colours every lesson relies on."""
    for color in (UNSCALED, SCALED):
        assert contrast_with_white(color) >= 3.0, color


def test_projector_fonts_are_large_enough():
    """At 100 dpi on a 1280x720 projector, 11 pt is about 15 px: the smallest size we allow."""
    sizes = {k: v for k, v in PROJECTOR_RC.items() if k.endswith(("size", "fontsize")) and k != "figure.dpi"}
    assert sizes and all(isinstance(v, (int, float)) and v >= 11 for v in sizes.values()), sizes
