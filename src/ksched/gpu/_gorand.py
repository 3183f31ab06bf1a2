"""Go's ``math/rand`` (v1), draw for draw: the seeded source and the draws the FGD artifact
makes (``Int`` as ``int_``, ``Intn``, ``Int63n``, ``Int31n``, ``Shuffle``, ``Perm``).

# math/rand/rng.go (rngSource: the additive lagged Fibonacci generator and its seeding)
# math/rand/rand.go (Rand: Int63n, Int31n, int31n, Intn, Perm, Shuffle, Float64)

The algorithm is the one Go has kept since Go 1 for a seeded source: 607 words of state,
tap 273, ``x[n] = x[n-607] + x[n-273] (mod 2**64)``, the state filled from the seed by the
Park-Miller generator (48271 mod 2**31-1) and XORed with Go's fixed table (``COOKED``).
Seeded streams never changed across Go releases, so the artifact's draws (built with any Go
from 1.15 on; on Go >= 1.24 its ``go 1.15`` module line keeps ``GODEBUG=randseednop=0``, so
``rand.Seed`` still takes effect) are these. Two range reductions coexist, as in Go:

- ``intn``/``int31n``/``int63n`` take the modulo of a rejection-sampled draw (the "modulo
  path": ``v % n`` after rejecting ``v > max``); ``perm`` uses ``intn``;
- ``shuffle`` uses Lemire's multiply-shift (``Rand.int31n``, the unbiased path, Go 1.10+).

Pure Python by measurement: the artifact's experiment draws ~25 000 numbers (a shuffle of
the pods, the tuning draws, a permutation of the nodes), a few milliseconds here.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence
from typing import TypeVar

from ._gorand_table import COOKED

__all__ = ["GoRand"]

_LEN = 607
_TAP = 273
_MASK64 = (1 << 64) - 1
_MASK63 = (1 << 63) - 1
_INT32_MAX = (1 << 31) - 1
_T = TypeVar("_T")


def _seedrand(x: int) -> int:
    """One step of x[n+1] = 48271 * x[n] mod (2**31 - 1), Schrage's way as Go does it."""
    hi, lo = divmod(x, 44488)
    x = 48271 * lo - 3399 * hi
    return x + _INT32_MAX if x < 0 else x


class GoRand:
    """A ``*rand.Rand`` over Go's seeded ``rngSource`` (``rand.New(rand.NewSource(seed))``,
    or the global generator after ``rand.Seed(seed)``: the same stream).

    Args:
        seed: the Go seed (an int64).
    """

    __slots__ = ("_feed", "_tap", "_vec")

    def __init__(self, seed: int) -> None:
        self._vec = [0] * _LEN
        self._tap = 0
        self._feed = 0
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """``Seed``: restart the stream from ``seed``."""
        self._tap = 0
        self._feed = _LEN - _TAP
        # Go's % truncates toward zero; a negative remainder is then moved into range.
        seed = abs(seed) % _INT32_MAX * (-1 if seed < 0 else 1)
        if seed < 0:
            seed += _INT32_MAX
        if seed == 0:
            seed = 89482311
        x = seed
        vec = self._vec
        for i in range(-20, _LEN):
            x = _seedrand(x)
            if i >= 0:
                u = (x << 40) & _MASK64
                x = _seedrand(x)
                u ^= (x << 20) & _MASK64
                x = _seedrand(x)
                u ^= x
                vec[i] = u ^ COOKED[i]

    def uint64(self) -> int:
        """``Uint64``: the next word of the source."""
        tap = self._tap - 1
        if tap < 0:
            tap += _LEN
        feed = self._feed - 1
        if feed < 0:
            feed += _LEN
        self._tap, self._feed = tap, feed
        vec = self._vec
        x = (vec[feed] + vec[tap]) & _MASK64
        vec[feed] = x
        return x

    def int63(self) -> int:
        """``Int63``: a non-negative 63-bit integer."""
        return self.uint64() & _MASK63

    def uint32(self) -> int:
        """``Uint32``: the top 32 of the 63 bits."""
        return self.int63() >> 31

    def int31(self) -> int:
        """``Int31``: a non-negative 31-bit integer."""
        return self.int63() >> 32

    def int_(self) -> int:
        """``Int`` (a 64-bit ``int``): the same value as ``Int63``."""
        return self.int63()

    def int63n(self, n: int) -> int:
        """``Int63n``: in [0, n), by rejection then modulo."""
        if n <= 0:
            raise ValueError("invalid argument to Int63n")
        if n & (n - 1) == 0:
            return self.int63() & (n - 1)
        limit = _MASK63 - (1 << 63) % n
        v = self.int63()
        while v > limit:
            v = self.int63()
        return v % n

    def int31n(self, n: int) -> int:
        """``Int31n``: in [0, n), by rejection then modulo."""
        if n <= 0 or n > _INT32_MAX:
            raise ValueError("invalid argument to Int31n")
        if n & (n - 1) == 0:
            return self.int31() & (n - 1)
        limit = _INT32_MAX - (1 << 31) % n
        v = self.int31()
        while v > limit:
            v = self.int31()
        return v % n

    def intn(self, n: int) -> int:
        """``Intn``: ``Int31n`` when n fits in 31 bits, else ``Int63n``."""
        if n <= 0:
            raise ValueError("invalid argument to Intn")
        return self.int31n(n) if n <= _INT32_MAX else self.int63n(n)

    def _int31n_unbiased(self, n: int) -> int:
        """Go's unexported ``int31n``: Lemire's multiply-shift (used by ``Shuffle``)."""
        prod = self.uint32() * n
        low = prod & 0xFFFFFFFF
        if low < n:
            thresh = ((1 << 32) - n) % n
            while low < thresh:
                prod = self.uint32() * n
                low = prod & 0xFFFFFFFF
        return prod >> 32

    def float64(self) -> float:
        """``Float64``: in [0, 1); a draw that rounds to 1.0 is drawn again, as Go does."""
        while True:
            f = self.int63() / (1 << 63)
            if f != 1.0:
                return f

    def perm(self, n: int) -> list[int]:
        """``Perm``: a permutation of range(n), one ``Intn(i+1)`` per element."""
        m = [0] * n
        for i in range(n):
            j = self.intn(i + 1)
            m[i] = m[j]
            m[j] = i
        return m

    def shuffle(self, n: int, swap: Callable[[int, int], None]) -> None:
        """``Shuffle``: Fisher-Yates from the end, ``swap(i, j)`` for i = n-1 .. 1."""
        if n < 0:
            raise ValueError("invalid argument to Shuffle")
        i = n - 1
        while i > _INT32_MAX - 1:
            swap(i, self.int63n(i + 1))
            i -= 1
        while i > 0:
            swap(i, self._int31n_unbiased(i + 1))
            i -= 1

    def shuffle_list(self, items: MutableSequence[_T]) -> None:
        """``Shuffle(len(items), swap)`` with the usual element swap, in place."""

        def swap(i: int, j: int) -> None:
            items[i], items[j] = items[j], items[i]

        self.shuffle(len(items), swap)
