#!/usr/bin/env python3
"""Whether a change leaves the kernels' machine code as it was.

    scripts/sass-compare.py [--build DIR] [--arch sm_90] BASE [FAMILY ...]
    scripts/sass-compare.py --cubins "A.cubin ..." "B.cubin ..."
    scripts/sass-compare.py --which

The first form compiles every .cu file of each family directory (kernels/FAMILY/) twice to a
cubin, as the library compiles it (the flags of DIR's ninja command for that family's first
object, DIR a configured CUDA build, default build/) but for one real architecture: once from the
tree of git revision BASE (git archive into a temporary folder) and once from the work tree. The
families default to those whose files differ between BASE and the work tree. Each side's kernels
are disassembled with nvdisasm and compared kernel by kernel, with what a move between files or
namespaces changes set aside: symbol names (demangled, anonymous and *_detail namespaces dropped),
branch label numbers, addresses and encodings. It prints, per family, the kernels on each side,
those only on one side and those that differ, and exits 1 when any kernel differs or is missing
from a side (2 on a usage or tool error).

The second form compares two given sets of cubins the same way; the third prints the nvdisasm it
uses (exit 2 when there is none to be had).

nvdisasm: $NVDISASM, the toolkit's (next to nvcc), one on the PATH, or the nvidia-cuda-nvdisasm
wheel unpacked into .deps/nvdisasm (downloaded with pip on first use: CUDA 13.0's Debian toolkit
has no disassembler).
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WHEEL = "nvidia-cuda-nvdisasm"


def fail(message):
    print(f"sass-compare: {message}", file=sys.stderr)
    sys.exit(2)


def find_nvdisasm():
    candidates = [os.environ.get("NVDISASM", "")]
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    candidates.append(os.path.join(os.path.dirname(nvcc), "nvdisasm"))
    candidates.append(shutil.which("nvdisasm") or "")
    local = os.path.join(ROOT, ".deps", "nvdisasm")
    candidates += [os.path.join(d, "nvdisasm") for d, _, files in os.walk(local) if "nvdisasm" in files]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    # Unpack the wheel of the toolkit's major version (any newer nvdisasm reads older cubins).
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.", version)
    spec = f"{WHEEL}=={m.group(1)}.*" if m else WHEEL
    with tempfile.TemporaryDirectory() as wheels:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", wheels, spec]
        if subprocess.run(pip).returncode != 0:
            fail(f"no nvdisasm found and `{' '.join(pip)}` failed; set NVDISASM")
        wheel = next(f for f in os.listdir(wheels) if f.endswith(".whl"))
        with zipfile.ZipFile(os.path.join(wheels, wheel)) as z:
            z.extractall(local)
    for d, _, files in os.walk(local):
        if "nvdisasm" in files:
            path = os.path.join(d, "nvdisasm")
            os.chmod(path, 0o755)
            print(f"sass-compare: nvdisasm from {wheel} in {d}", file=sys.stderr)
            return path
    fail(f"{wheel} holds no nvdisasm")


def canonical_name(name):
    name = name.replace("(anonymous namespace)::", "")
    return re.sub(r"\btlrt::kernels::(\w+_detail::)?", "", name)


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return dict(zip(names, out.stdout.split("\n")))


def kernels(nvdisasm, cubins):
    """{canonical kernel name: [normalised instructions]} over the cubins."""
    result = {}
    for cubin in cubins:
        run = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"nvdisasm {cubin}: {run.stderr.strip()}")
        sections, current = {}, None
        for line in run.stdout.split("\n"):
            m = re.match(r"\s*\.section\s+\.text\.(\S+?),", line)
            if m:
                current = m.group(1)
                sections[current] = []
                continue
            text = line.strip()
            if current is None or not text or text.startswith("//"):
                continue
            if text.startswith(".") and not text.startswith(".L"):
                continue  # directives
            sections[current].append(text)
        names = demangle(list(sections))
        for mangled, lines in sections.items():
            labels, body = {}, []
            for text in lines:
                text = re.sub(r"/\*[0-9a-f]{4,}\*/", "", text)  # addresses
                text = re.sub(r"/\* 0x[0-9a-f]+ \*/", "", text)  # encodings
                text = re.sub(r"\.L_x_\d+", lambda m: labels.setdefault(m.group(0), f"L{len(labels)}"), text)
                text = re.sub(r"_Z\w+", "SYMBOL", text)
                text = re.sub(r"\$\S+", "SYMBOL", text)
                text = " ".join(text.split())
                if text:
                    body.append(text)
            name = canonical_name(names.get(mangled, mangled))
            if name in result:
                fail(f"{name} appears twice among {' '.join(cubins)}")
            result[name] = body
    return result


def compare(nvdisasm, label, a_cubins, b_cubins):
    a, b = kernels(nvdisasm, a_cubins), kernels(nvdisasm, b_cubins)
    bad = 0
    for name in sorted(set(a) | set(b)):
        if name not in b:
            print(f"  only before: {name}")
        elif name not in a:
            print(f"  only after: {name}")
        elif a[name] != b[name]:
            print(f"  differs: {name} ({len(a[name])} / {len(b[name])} instructions)")
        else:
            continue
        bad += 1
    same = sum(1 for n in a if n in b and a[n] == b[n])
    print(f"{label}: {len(a)} kernels before, {len(b)} after, {same} with the same machine code")
    return bad == 0


def compile_command(build, family):
    """The nvcc command of the family's first object in the build, as an argument list."""
    objects = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True,
                             text=True).stdout
    target = next((l.split(":")[0] for l in objects.split("\n")
                   if f"/kernels/{family}/" in l and l.split(":")[0].endswith(".cu.o")), None)
    if target is None:
        fail(f"{build} compiles no .cu of kernels/{family} (configure it with TLRT_ENABLE_CUDA=ON)")
    command = subprocess.run(["ninja", "-C", build, "-t", "commands", target], capture_output=True,
                             text=True).stdout.strip().split("\n")[-1]
    return shlex.split(command)


def cubin_command(template, root, source, out, arch):
    """template with its root, source and output replaced, compiling to a cubin for arch."""
    args, i = [], 0
    while i < len(template):
        a = template[i]
        i += 1
        if a == "-MD" or a.startswith(("--generate-code", "-gencode", "-arch")):
            continue
        if a in ("-MT", "-MF", "-o", "-c"):
            i += 1  # and its argument
            continue
        if a.startswith("-I") and os.path.realpath(a[2:]) == os.path.realpath(ROOT):
            a = "-I" + root
        args.append(a)
    return args + [f"-arch={arch}", "-cubin", source, "-o", out]


def families_changed(base):
    names = subprocess.run(["git", "-C", ROOT, "diff", "--name-only", base, "--", "kernels"],
                           capture_output=True, text=True, check=True).stdout.split()
    names += subprocess.run(["git", "-C", ROOT, "ls-files", "--others", "--exclude-standard",
                             "kernels"], capture_output=True, text=True).stdout.split()
    return sorted({n.split("/")[1] for n in names if n.count("/") >= 2})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--cubins", nargs=2, metavar=("BEFORE", "AFTER"))
    p.add_argument("--which", action="store_true")
    p.add_argument("base", nargs="?")
    p.add_argument("families", nargs="*")
    args = p.parse_args()
    nvdisasm = find_nvdisasm()
    if args.which:
        print(nvdisasm)
        return
    if args.cubins:
        ok = compare(nvdisasm, "cubins", args.cubins[0].split(), args.cubins[1].split())
        sys.exit(0 if ok else 1)
    if not args.base:
        p.error("BASE (a git revision) or --cubins is required")
    families = args.families or families_changed(args.base)
    if not families:
        print(f"no kernel family differs from {args.base}")
        return
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        before = os.path.join(tmp, "before")
        os.makedirs(before)
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.base],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", before], input=archive, check=True)
        for family in families:
            template = compile_command(args.build, family)
            sides = []
            for side, root in (("before", before), ("after", ROOT)):
                folder = os.path.join(root, "kernels", family)
                sources = sorted(f for f in os.listdir(folder) if f.endswith(".cu")) \
                    if os.path.isdir(folder) else []
                cubins = []
                for source in sources:
                    out = os.path.join(tmp, f"{side}-{family}-{source}.cubin")
                    cmd = cubin_command(template, root, os.path.join(folder, source), out, args.arch)
                    run = subprocess.run(cmd, capture_output=True, text=True)
                    if run.returncode != 0:
                        fail(f"compiling {side} kernels/{family}/{source}:\n{run.stderr}")
                    cubins.append(out)
                sides.append(cubins)
            ok = compare(nvdisasm, f"kernels/{family}", *sides) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
