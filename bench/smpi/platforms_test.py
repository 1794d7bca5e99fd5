#!/usr/bin/env python3
"""Tests of platforms.py: for each platform and several p, the XML parses, every host of the
hostfile exists with the platform's core count, the hostfile fills nodes in order, the SMPI
settings are in <config> each after a comment naming its source, every source key used is
defined, and the torus has one link per neighbouring router pair (wrap-around included)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import platforms  # noqa: E402


def generate(platform, np_, out):
    subprocess.run([sys.executable, os.path.join(HERE, "platforms.py"), platform, "--np", str(np_), "--out-dir", out],
                   check=True, capture_output=True)
    with open(os.path.join(out, f"{platform}_p{np_}.xml")) as f:
        text = f.read()
    with open(os.path.join(out, f"{platform}_p{np_}.hosts")) as f:
        hosts = f.read().split()
    return text, hosts


def host_ids(root):
    """Host names the platform defines: explicit <host>s, or a <cluster>'s prefix + radical range."""
    ids = {h.get("id") for h in root.iter("host")}
    for c in root.iter("cluster"):
        lo, hi = map(int, c.get("radical").split("-"))
        ids |= {f"{c.get('prefix')}{i}{c.get('suffix')}" for i in range(lo, hi + 1)}
    return ids


class PlatformsTest(unittest.TestCase):
    def test_hosts_cores_and_placement(self):
        with tempfile.TemporaryDirectory() as out:
            for platform in ("torus", "fattree", "dragonfly"):
                for np_ in (1, 17, 64, 1000):
                    text, hosts = generate(platform, np_, out)
                    root = ET.fromstring(text.split("?>", 1)[1])
                    cores = platforms.value(platform, "cores_per_node")
                    self.assertEqual(len(hosts), np_)
                    self.assertTrue(set(hosts) <= host_ids(root), f"{platform} p={np_}: a hostfile host is not in the platform")
                    self.assertEqual(hosts, [f"n{r // cores}" for r in range(np_)])
                    counts = {e.get("core") for e in list(root.iter("host")) + list(root.iter("cluster"))}
                    self.assertEqual(counts, {str(cores)})

    def test_every_setting_has_a_source(self):
        with tempfile.TemporaryDirectory() as out:
            for platform in ("torus", "fattree", "dragonfly"):
                text, _ = generate(platform, 64, out)
                config = text[text.index("<config>"):text.index("</config>")]
                lines = [l.strip() for l in config.splitlines()[1:]]
                props = [i for i, l in enumerate(lines) if l.startswith("<prop")]
                self.assertGreaterEqual(len(props), 10)
                for i in props:
                    self.assertTrue(lines[i - 1].startswith("<!--"), f"{platform}: {lines[i]} has no comment above it")
                for key in {src.split(":")[0] for _, src in platforms.PARAMS[platform].values()}:
                    self.assertIn(key, platforms.SOURCES, f"{platform}: source key {key} is not defined")
                self.assertIn('<prop id="smpi/lat-factor" value="0:1"/>', config)
                eager = platforms.value(platform, "eager")
                self.assertIn(f'<prop id="smpi/async-small-thresh" value="{eager}"/>', config)

    def test_torus_links(self):
        with tempfile.TemporaryDirectory() as out:
            text, _ = generate("torus", 4096, out)  # 256 nodes, 128 Gemini routers: 8x4x4
            routes = re.findall(r'<route src="(g[0-9_]+)" dst="(g[0-9_]+)">', text)
            self.assertEqual(len(routes), 128 * 3)  # every router: one link per dimension (all > 2)
            pairs = {frozenset(r) for r in routes}
            self.assertEqual(len(pairs), len(routes))
            self.assertIn(frozenset({"g7_0_0", "g0_0_0"}), pairs)  # wrap-around in X
            self.assertEqual(len(re.findall(r'<host id="n\d+"', text)), 256)

    def test_committed_examples_match_the_generator(self):
        committed = os.path.join(HERE, "platforms")
        names = sorted(n for n in os.listdir(committed) if n.endswith((".xml", ".hosts")))
        self.assertEqual(len(names), 12)  # 3 platforms x 2 sizes x (XML, hostfile)
        with tempfile.TemporaryDirectory() as out:
            for name in names:
                platform, np_ = name.rsplit(".", 1)[0].split("_p")
                generate(platform, int(np_), out)
                with open(os.path.join(committed, name)) as a, open(os.path.join(out, name)) as b:
                    self.assertEqual(a.read(), b.read(), f"{name} differs: run bench/smpi/platforms/regenerate.sh")

    def test_bad_np(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, "platforms.py"), "torus", "--np", "0"], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--np must be at least 1", r.stderr)


if __name__ == "__main__":
    unittest.main()
