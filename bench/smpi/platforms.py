#!/usr/bin/env python3
"""SimGrid platform files (XML) and hostfiles for SMPI runs of cartplan, sized for p ranks.

    python3 bench/smpi/platforms.py torus --np 64 --out-dir /tmp/plat     # torus_p64.xml, torus_p64.hosts
    python3 bench/smpi/platforms.py {torus,fattree,dragonfly} --np P --out-dir DIR [--print-params]

Three platforms with multi-core nodes (ranks on one node talk through the node's loopback), each
value taken from a published source named next to it (PARAMS below; the XML repeats every source
in a comment next to the value):
  torus      Cray XK7 "Titan"-like: 3-D torus of Gemini routers, 2 nodes per Gemini, 16 cores per node
  fattree    Intel Omni-Path "Hydra"-like: two-level fat tree of 48-port switches, 32 cores per node
  dragonfly  Cray XC (Aries)-like: 4 nodes per Aries, 16 Aries per chassis, 6 chassis per group, 32 cores
The platform is sized to the job (the torus wraps at the job's size); the hostfile lists one line per
rank, ranks filling a node's cores before the next node (block placement). docs/smpi.md explains the
choices, how SMPI uses each value, and what SMPI does not model.
"""
import argparse
import math
import os
import sys

# Sources, cited by key in the comments of the generated XML.
SOURCES = {
    "alverson2010": "R. Alverson, D. Roweth, L. Kaplan: The Gemini System Interconnect. IEEE HOTI 2010, pp. 83-87",
    "euroben2013": "A. van der Steen: Overview of recent supercomputers, Cray XE6/XK7 entry (euroben.nl, 2013), "
                   "quoting [alverson2010]: Gemini NIC 64 B per 5 cycles at 650 MHz = 8.3 GB/s per direction, "
                   "latency 0.7-1.4 us depending on the type of transfer",
    "vishnu2011": "A. Vishnu, M. ten Bruggencate, R. Olson: Evaluating the Potential of Cray Gemini Interconnect for "
                  "PGAS Communication Runtime Systems. IEEE HOTI 2011 (DMAPP: 6911 MB/s peak, about 1 us get latency)",
    "titan_links": "Titan's Gemini torus links: 9.375 GB/s per direction in X and Z, 4.6875 GB/s in Y (Y links have "
                   "half the lanes), as reported for ORNL's Cray XK7; docs/smpi.md flags this value as not re-checked",
    "traff2019": "J. L. Traeff, S. Hunold: Cartesian Collective Communication. ICPP 2019, Table 2 (Titan: Opteron "
                 "6274, 16 cores per node; Hydra: 2 x Xeon Gold 6130, 32 cores per node, Omni-Path)",
    "cray_mpi": "Cray MPICH intro_mpi(3) man page: MPICH_GNI_MAX_EAGER_MSG_SIZE, default 8192 bytes (Gemini and Aries)",
    "birrittella2015": "M. S. Birrittella et al.: Intel Omni-Path Architecture: Enabling Scalable, High Performance "
                       "Fabrics. IEEE HOTI 2015 (100 Gb/s links, 48-port switch ASIC, 100-110 ns switch latency, "
                       "MPI latency about 1 us)",
    "intel_opa_switch": "Intel Omni-Path Edge Switch 100 Series 48-port product brief (48 ports, fat trees of 5 hops "
                        "up to 27,648 nodes)",
    "psm2": "Intel PSM2 Programmer's Guide: PSM2_MQ_RNDV_HFI_THRESH, eager-to-rendezvous switch at 64000 bytes",
    "alverson2012": "B. Alverson, E. Froese, L. Kaplan, D. Roweth: Cray XC Series Network. Cray white paper "
                    "WP-Aries01-1112, 2012 (4 nodes per Aries, 16 Aries per chassis on the rank-1 backplane, 6 chassis "
                    "per group on rank-2 copper with 3 links per router pair, optical rank-3 between groups, "
                    "3-lane links, MPI latency about 1.3 us)",
    "faanes2012": "G. Faanes et al.: Cray Cascade: a Scalable HPC System Based on a Dragonfly Network. SC 2012",
    "nesi_aries": "NeSI: XC50 Aries Network Architecture (rank-1 and rank-2 lanes at 14 Gb/s, rank-3 optical at 12.5 Gb/s; "
                  "16 Aries per chassis, 4 nodes per Aries)",
    "cori": "NERSC Cori Haswell nodes (Cray XC40): 2 x 16-core Xeon E5-2698 v3, 32 cores per node",
    "degomme2017": "A. Degomme, A. Legrand, G. Markomanolis, M. Quinson, M. Stillwell, F. Suter: Simulating MPI "
                   "Applications: the SMPI Approach. IEEE TPDS 28(8), 2017 (piecewise per-message overheads os/or/ois, "
                   "latency and bandwidth factors, eager/detached thresholds)",
    "assumed": "not a published measurement: a stated assumption (docs/smpi.md, 'Choices without a source')",
}

# Every value with the source it comes from and, where it is derived, how. Times in seconds,
# bandwidths in bytes per second, sizes in bytes.
PARAMS = {
    "torus": {
        "cores_per_node": (16, "traff2019"),
        "nodes_per_router": (2, "alverson2010"),
        "nic_bw": (6.911e9, "vishnu2011: measured peak of the node-to-Gemini path (NIC peak 8.3 GB/s [euroben2013])"),
        # 0.7 us for the fastest transfer type [euroben2013], split over the two NIC traversals of a message.
        "nic_lat": (0.35e-6, "euroben2013: 0.7 us fastest NIC transfer, half per NIC traversal"),
        "link_bw_xz": (9.375e9, "titan_links"),
        "link_bw_y": (4.6875e9, "titan_links"),
        "hop_lat": (0.1e-6, "alverson2010: about 100 ns per Gemini router hop (flagged in docs/smpi.md)"),
        # 1.4 us, the slow end of [euroben2013], for an MPI message; 0.8 us is on the wire (2 NIC
        # traversals and one hop), the rest is the software's, split between sender and receiver.
        "os": (0.3e-6, "euroben2013: 1.4 us MPI latency - 0.8 us wire, half at the sender"),
        "or": (0.3e-6, "euroben2013: 1.4 us MPI latency - 0.8 us wire, half at the receiver"),
        "eager": (8192, "cray_mpi"),
        "loopback_lat": (0.1e-6, "assumed"),
        "loopback_bw": (5e9, "assumed"),
    },
    "fattree": {
        "cores_per_node": (32, "traff2019"),
        "switch_down": (24, "intel_opa_switch: 48-port switches, half down and half up (full bisection)"),
        "link_bw": (12.5e9, "birrittella2015: 100 Gb/s per direction"),
        # 110 ns per switch [birrittella2015]; a message crosses 2 links (same leaf) or 4 (via a spine).
        "link_lat": (0.11e-6, "birrittella2015: 100-110 ns switch latency, one switch per link"),
        # About 1 us MPI latency [birrittella2015] on the shortest path (2 links, 0.22 us on the wire).
        "os": (0.39e-6, "birrittella2015: 1.0 us MPI latency - 0.22 us wire, half at the sender"),
        "or": (0.39e-6, "birrittella2015: 1.0 us MPI latency - 0.22 us wire, half at the receiver"),
        "eager": (64000, "psm2"),
        "loopback_lat": (0.1e-6, "assumed"),
        "loopback_bw": (5e9, "assumed"),
    },
    "dragonfly": {
        "cores_per_node": (32, "cori"),
        "nodes_per_router": (4, "alverson2012"),
        "routers_per_chassis": (16, "alverson2012"),
        "chassis_per_group": (6, "alverson2012"),
        "rank2_links": (3, "alverson2012"),
        "rank3_links": (10, "nesi_aries: 10 optical links per Aries, all between the two groups here"),
        "link_bw": (5.25e9, "nesi_aries: 3 lanes x 14 Gb/s = 42 Gb/s per direction (alverson2012: 3-lane links)"),
        "link_lat": (0.1e-6, "faanes2012: about 100 ns per Aries router (flagged in docs/smpi.md)"),
        # About 1.3 us MPI latency [alverson2012] between two routers of a chassis (3 links, 0.3 us).
        "os": (0.5e-6, "alverson2012: 1.3 us MPI latency - 0.3 us wire, half at the sender"),
        "or": (0.5e-6, "alverson2012: 1.3 us MPI latency - 0.3 us wire, half at the receiver"),
        "eager": (8192, "cray_mpi"),
        "loopback_lat": (0.1e-6, "assumed"),
        "loopback_bw": (5e9, "assumed"),
    },
}


def value(platform, key):
    return PARAMS[platform][key][0]


def cite(platform, key):
    """'value (source)' for an XML comment; a source key expands to its reference once per file."""
    v, src = PARAMS[platform][key]
    return f"{key} = {v:g}: {src}"


def smpi_config(platform):
    """The <config> block: SMPI's per-message model for this platform (Degomme et al. 2017).

    os/or/ois: CPU time a send / receive / Isend costs the calling rank, "threshold:seconds:seconds_per_byte".
    async-small-thresh and send-is-detached-thresh: the eager limit (messages up to it complete at the
    sender without waiting for the receiver; above it the sender waits for the matching receive).
    lat-factor and bw-factor 1: the link values above are the published per-component numbers, not
    SMPI's default factors (fitted on another cluster). Computation is not simulated (deterministic
    runs): CPU time between MPI calls is free, see docs/smpi.md.
    """
    os_, or_, eager = value(platform, "os"), value(platform, "or"), value(platform, "eager")
    items = [
        ("smpi/os", f"0:{os_:g}:0", cite(platform, "os")),
        ("smpi/ois", f"0:{os_:g}:0", "an MPI_Isend costs the sender what a send does: " + cite(platform, "os")),
        ("smpi/or", f"0:{or_:g}:0", cite(platform, "or")),
        ("smpi/async-small-thresh", str(eager), cite(platform, "eager")),
        ("smpi/send-is-detached-thresh", str(eager), cite(platform, "eager")),
        ("smpi/lat-factor", "0:1", "degomme2017: correction factors off, the links carry the published values"),
        ("smpi/bw-factor", "0:1", "degomme2017: correction factors off, the links carry the published values"),
        ("network/crosstraffic", "0", "HPC fabrics: no TCP acknowledgements sharing the reverse direction"),
        ("smpi/simulate-computation", "no", "deterministic: CPU time between MPI calls is not simulated"),
        ("smpi/test", "1e-7", "assumed: SMPI's default charges 100 us per MPI_Test"),
        ("smpi/iprobe", "1e-7", "assumed: SMPI's default charges 100 us per MPI_Iprobe"),
        ("smpi/grow-injected-times", "no", "assumed: a poll costs the same every time"),
        ("network/loopback-lat", f"{value(platform, 'loopback_lat'):g}", cite(platform, "loopback_lat")),
        ("network/loopback-bw", f"{value(platform, 'loopback_bw'):g}", cite(platform, "loopback_bw")),
    ]
    lines = [" <config>"]
    for key, val, why in items:
        lines.append(f"  <!-- {why} -->")
        lines.append(f'  <prop id="{key}" value="{val}"/>')
    lines.append(" </config>")
    return lines


def torus_dims(routers):
    """Three factors of `routers`, as equal as possible, largest first (like MPI_Dims_create)."""
    best = None
    for x in range(1, routers + 1):
        if routers % x:
            continue
        for y in range(1, routers // x + 1):
            if (routers // x) % y:
                continue
            z = routers // x // y
            dims = sorted((x, y, z), reverse=True)
            if best is None or dims[0] - dims[2] < best[0] - best[2]:
                best = dims
    return best


def torus_zone(nodes):
    """Routers g<x>_<y>_<z> on a 3-D torus, nodes n<i> attached two per router, shortest-path routes."""
    per = value("torus", "nodes_per_router")
    routers = max(1, math.ceil(nodes / per))
    dims = torus_dims(routers)
    lines = [f' <zone id="torus" routing="Floyd">  <!-- {dims[0]}x{dims[1]}x{dims[2]} Gemini routers -->']
    lines.append(f"  <!-- nodes: {cite('torus', 'cores_per_node')}; {cite('torus', 'nodes_per_router')} -->")
    for i in range(routers * per):
        lines.append(f'  <host id="n{i}" speed="1Gf" core="{value("torus", "cores_per_node")}"/>')
    coords = [(x, y, z) for x in range(dims[0]) for y in range(dims[1]) for z in range(dims[2])]
    name = {c: f"g{c[0]}_{c[1]}_{c[2]}" for c in coords}
    for c in coords:
        lines.append(f'  <router id="{name[c]}"/>')
    lines.append(f"  <!-- NIC links: {cite('torus', 'nic_bw')}; {cite('torus', 'nic_lat')} -->")
    lines.append(f"  <!-- torus links: X, Z {cite('torus', 'link_bw_xz')}; Y {cite('torus', 'link_bw_y')}; "
                 f"{cite('torus', 'hop_lat')} -->")
    routes = []
    for i in range(routers * per):
        lines.append(f'  <link id="nic{i}" bandwidth="{value("torus", "nic_bw"):g}Bps" '
                     f'latency="{value("torus", "nic_lat"):g}s" sharing_policy="SPLITDUPLEX"/>')
        routes.append(f'  <route src="n{i}" dst="{name[coords[i // per]]}"><link_ctn id="nic{i}" direction="UP"/></route>')
    seen = set()
    for c in coords:
        for dim in range(3):
            if dims[dim] == 1:
                continue
            nxt = list(c)
            nxt[dim] = (c[dim] + 1) % dims[dim]
            nxt = tuple(nxt)
            if (nxt, c) in seen or (c, nxt) in seen:  # a dimension of 2: one link, not two
                continue
            seen.add((c, nxt))
            bw = value("torus", "link_bw_y") if dim == 1 else value("torus", "link_bw_xz")
            link = f"t{dim}_{name[c]}"
            lines.append(f'  <link id="{link}" bandwidth="{bw:g}Bps" latency="{value("torus", "hop_lat"):g}s" '
                         'sharing_policy="SPLITDUPLEX"/>')
            routes.append(f'  <route src="{name[c]}" dst="{name[nxt]}"><link_ctn id="{link}" direction="UP"/></route>')
    lines += routes
    lines.append(" </zone>")
    return lines, routers * per


def fattree_cluster(nodes):
    down = value("fattree", "switch_down")
    leaves = max(2, math.ceil(nodes / down))
    cores = value("fattree", "cores_per_node")
    hosts = down * leaves
    lines = [f"  <!-- {cite('fattree', 'cores_per_node')}; {cite('fattree', 'switch_down')}; "
             f"{leaves} leaf switches, {down} spines -->",
             f"  <!-- {cite('fattree', 'link_bw')}; {cite('fattree', 'link_lat')} -->",
             f"  <!-- loopback: {cite('fattree', 'loopback_bw')}; {cite('fattree', 'loopback_lat')} -->",
             f' <cluster id="fattree" prefix="n" suffix="" radical="0-{hosts - 1}" speed="1Gf" core="{cores}"'
             f' bw="{value("fattree", "link_bw"):g}Bps" lat="{value("fattree", "link_lat"):g}s"'
             f' loopback_bw="{value("fattree", "loopback_bw"):g}Bps" loopback_lat="{value("fattree", "loopback_lat"):g}s"'
             f' sharing_policy="SPLITDUPLEX" topology="FAT_TREE" topo_parameters="2;{down},{leaves};1,{down};1,1"/>']
    return lines, hosts


def dragonfly_cluster(nodes):
    p = PARAMS["dragonfly"]
    per_group = value("dragonfly", "nodes_per_router") * value("dragonfly", "routers_per_chassis") * \
        value("dragonfly", "chassis_per_group")
    groups = max(2, math.ceil(nodes / per_group))  # at least two groups: the optical level exists
    hosts = groups * per_group
    topo = (f"{groups},{value('dragonfly', 'rank3_links')};{value('dragonfly', 'chassis_per_group')},"
            f"{value('dragonfly', 'rank2_links')};{value('dragonfly', 'routers_per_chassis')},1;"
            f"{value('dragonfly', 'nodes_per_router')}")
    lines = [f"  <!-- {'; '.join(cite('dragonfly', k) for k in ('cores_per_node', 'nodes_per_router', 'routers_per_chassis', 'chassis_per_group', 'rank2_links', 'rank3_links'))} -->",
             f"  <!-- {cite('dragonfly', 'link_bw')}; {cite('dragonfly', 'link_lat')} -->",
             f"  <!-- loopback: {cite('dragonfly', 'loopback_bw')}; {cite('dragonfly', 'loopback_lat')} -->",
             f' <cluster id="dragonfly" prefix="n" suffix="" radical="0-{hosts - 1}" speed="1Gf"'
             f' core="{p["cores_per_node"][0]}" bw="{value("dragonfly", "link_bw"):g}Bps"'
             f' lat="{value("dragonfly", "link_lat"):g}s" loopback_bw="{value("dragonfly", "loopback_bw"):g}Bps"'
             f' loopback_lat="{value("dragonfly", "loopback_lat"):g}s" sharing_policy="SPLITDUPLEX"'
             f' topology="DRAGONFLY" topo_parameters="{topo}"/>']
    return lines, hosts


def platform_xml(platform, np_):
    cores = value(platform, "cores_per_node")
    nodes = math.ceil(np_ / cores)
    body, hosts = {"torus": torus_zone, "fattree": fattree_cluster, "dragonfly": dragonfly_cluster}[platform](nodes)
    used = sorted({src.split(":")[0] for _, src in PARAMS[platform].values()} | {"degomme2017"})
    head = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
            f"<!-- cartplan SMPI platform '{platform}' for {np_} ranks ({nodes} nodes used of {hosts}), written by",
            f"     bench/smpi/platforms.py (platform {platform}, np {np_}). Sources:"]
    head += [f"     [{k}] {SOURCES[k]}" for k in used if k in SOURCES]
    head += ["-->", '<platform version="4.1">']
    text = "\n".join(head + smpi_config(platform) + body + ["</platform>", ""])
    assert "--" not in text.replace("<!--", "").replace("-->", ""), "XML comments must not contain '--'"
    return text, nodes


def hostfile(platform, np_):
    cores = value(platform, "cores_per_node")
    return "".join(f"n{r // cores}\n" for r in range(np_))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("platform", choices=sorted(PARAMS))
    ap.add_argument("--np", type=int, required=True, help="ranks (one per core, cores filled node by node)")
    ap.add_argument("--out-dir", default=".", help="where PLATFORM_pNP.xml and PLATFORM_pNP.hosts go")
    ap.add_argument("--print-params", action="store_true", help="print the values and their sources, write nothing")
    a = ap.parse_args(argv)
    if a.np < 1:
        ap.error(f"--np must be at least 1, not {a.np}")
    if a.print_params:
        for key, (v, src) in PARAMS[a.platform].items():
            print(f"{key:20} {v:<12g} {src}")
        return 0
    xml, nodes = platform_xml(a.platform, a.np)
    os.makedirs(a.out_dir, exist_ok=True)
    stem = os.path.join(a.out_dir, f"{a.platform}_p{a.np}")
    with open(stem + ".xml", "w") as f:
        f.write(xml)
    with open(stem + ".hosts", "w") as f:
        f.write(hostfile(a.platform, a.np))
    print(f"{stem}.xml {stem}.hosts ({nodes} nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
