"""The stand-in regex.py against the real `regex` package (pinned in the
reference's requirements.txt): the same substitution on every code point
and on mixed text. Run with the reference server's Python
(tests/reference/fetch.rs), outside the component."""

import importlib.util
import random
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_shim():
    spec = importlib.util.spec_from_file_location("regex_shim", HERE / "regex.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_real():
    """The installed `regex`, not the shim beside this file (imported once:
    it is a package of several modules)."""
    if "regex" in sys.modules and Path(sys.modules["regex"].__file__).parent != HERE:
        return sys.modules["regex"]
    saved_path = sys.path[:]
    sys.modules.pop("regex", None)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    try:
        import regex

        return regex
    finally:
        sys.path[:] = saved_path


class RegexShim(unittest.TestCase):
    def test_whitespace_is_regexs_on_every_code_point(self):
        shim, real = load_shim(), load_real()
        self.assertNotEqual(shim.__file__, real.__file__)
        for code in range(sys.maxunicode + 1):
            text = f"a{chr(code)}{chr(code)}b"
            self.assertEqual(shim.sub(r"\s+", " ", text), real.sub(r"\s+", " ", text), hex(code))

    def test_mixed_text(self):
        shim, real = load_shim(), load_real()
        pool = "ab \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2003\u200b\u2028\u202f\u3000é漢"
        chance = random.Random(27)
        for _ in range(2000):
            text = "".join(chance.choice(pool) for _ in range(chance.randrange(30)))
            self.assertEqual(shim.sub(r"\s+", " ", text), real.sub(r"\s+", " ", text), repr(text))

    def test_other_patterns_fail_loudly(self):
        with self.assertRaises(NotImplementedError):
            load_shim().sub(r"\d+", "", "a1")


if __name__ == "__main__":
    unittest.main()
