"""Nuclides written in any of their notations are one name (docs/decisions/detector.md, "Entities"): an element's
symbol or name with its mass number, in either order, hyphenated or glued, with an ``m`` for a metastable state:
``I-131`` = ``Iodine-131`` = ``131I``, ``F-18`` = ``18F``, ``Tc-99m`` = ``99mTc``. A mass number an element cannot
have (below its atomic number, or far above the heaviest isotopes: ``B-52``, ``K-9``) reads no nuclide."""

from __future__ import annotations

import re

__all__ = ["nuclide_key"]

#: the elements in order of atomic number: symbol and English name
_ELEMENTS = (
    "H hydrogen He helium Li lithium Be beryllium B boron C carbon N nitrogen O oxygen F fluorine Ne neon "
    "Na sodium Mg magnesium Al aluminium Si silicon P phosphorus S sulfur Cl chlorine Ar argon K potassium "
    "Ca calcium Sc scandium Ti titanium V vanadium Cr chromium Mn manganese Fe iron Co cobalt Ni nickel Cu copper "
    "Zn zinc Ga gallium Ge germanium As arsenic Se selenium Br bromine Kr krypton Rb rubidium Sr strontium "
    "Y yttrium Zr zirconium Nb niobium Mo molybdenum Tc technetium Ru ruthenium Rh rhodium Pd palladium Ag silver "
    "Cd cadmium In indium Sn tin Sb antimony Te tellurium I iodine Xe xenon Cs caesium Ba barium La lanthanum "
    "Ce cerium Pr praseodymium Nd neodymium Pm promethium Sm samarium Eu europium Gd gadolinium Tb terbium "
    "Dy dysprosium Ho holmium Er erbium Tm thulium Yb ytterbium Lu lutetium Hf hafnium Ta tantalum W tungsten "
    "Re rhenium Os osmium Ir iridium Pt platinum Au gold Hg mercury Tl thallium Pb lead Bi bismuth Po polonium "
    "At astatine Rn radon Fr francium Ra radium Ac actinium Th thorium Pa protactinium U uranium Np neptunium "
    "Pu plutonium Am americium Cm curium Bk berkelium Cf californium Es einsteinium Fm fermium Md mendelevium "
    "No nobelium Lr lawrencium"
).split()
#: lower-case symbol or name -> (symbol, atomic number)
_BY_WORD: dict[str, tuple[str, int]] = {}
for _z, (_sym, _name) in enumerate(zip(_ELEMENTS[::2], _ELEMENTS[1::2]), start=1):
    _BY_WORD[_sym.lower()] = _BY_WORD[_name] = (_sym, _z)
_BY_WORD["sulphur"] = _BY_WORD["sulfur"]
_BY_WORD["cesium"] = _BY_WORD["caesium"]
_BY_WORD["aluminum"] = _BY_WORD["aluminium"]

#: "i-131", "iodine-131", "tc-99m"; "131i", "99mtc", "18f"
_ELEMENT_FIRST = re.compile(r"([a-z]+)-(\d{1,3})(m?)")
_MASS_FIRST = re.compile(r"(\d{1,3})(m?)([a-z]{1,2})")


def _plausible(z: int, mass: int) -> bool:
    """Can an isotope of the element of atomic number ``z`` have this mass number (the known isotopes lie between
    z and about 2.6 z + 10)?"""
    return z <= mass <= 2.6 * z + 10


def nuclide_key(low: str) -> str:
    """The canonical key of a nuclide written as ``low`` (lower case), "" when it reads none."""
    m = _ELEMENT_FIRST.fullmatch(low)
    if m is not None:
        word, mass, meta = m.groups()
    else:
        m = _MASS_FIRST.fullmatch(low)
        if m is None:
            return ""
        mass, meta, word = m.groups()
    element = _BY_WORD.get(word)
    if element is None or not _plausible(element[1], int(mass)):
        return ""
    return f"{element[0].lower()}-{int(mass)}{meta}"
