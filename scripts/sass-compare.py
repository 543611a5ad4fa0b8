#!/usr/bin/env python3
"""Whether a change leaves the kernels' machine code and resources as they were.

    scripts/sass-compare.py [--build DIR] [--arch sm_90] [--code-only] BASE [FAMILY ...]
    scripts/sass-compare.py [--code-only] --cubins "A.cubin ..." "B.cubin ..."
    scripts/sass-compare.py --which

The first form compiles every .cu file of each family directory (kernels/FAMILY/) twice to a
cubin, as the library compiles it (the flags of DIR's ninja command for that family's first
object, DIR a configured CUDA build, default build/) but for one real architecture: once from the
tree of git revision BASE (git archive into a temporary folder) and once from the work tree. The
families default to those whose files differ between BASE and the work tree. Each side's cubins
are disassembled with nvdisasm and compared kernel by kernel (device functions kept out of line
count as kernels), in these parts:
  machine code        the kernel's code section, with its flags;
  kernel attributes   its own attribute section (parameters, launch bounds, ...);
  registers, frame and stack   its entries in the cubin's attribute table;
  static shared memory, parameter bank   the alignment and size of those sections.
What a move between files or namespaces changes is set aside: symbol names (demangled, anonymous
and *_detail namespaces dropped) and their binding, branch label numbers, addresses and encodings.
It prints, per family, the kernels only on one side, those that differ and in which parts (sizes
for the two data sections), and a count of those with the same machine code and of those the same
in every part. Exit 1 when a kernel differs in any part or is missing from a side (with
--code-only: in its machine code or missing), 2 on a usage or tool error.

A split of one file changes the shared-memory layout of a module: where a module holds a kernel
with 16-byte aligned dynamic shared memory, nvcc gives every kernel of it a static shared-memory
section aligned to 16 bytes (1 KiB for a kernel that declares none; sizes rounded up to 16), so
kernels that leave or join such a module differ in that part alone. tests/tools/
sass-compare-check.sh shows the case on two small kernels.

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


def normalise(lines):
    """Section lines with addresses, encodings, label numbers and symbol names set aside."""
    labels, body = {}, []
    for text in lines:
        text = re.sub(r"/\*[0-9a-f]{4,}\*/", "", text)  # addresses
        text = re.sub(r"/\* 0x[0-9a-f]+ \*/", "", text)  # encodings
        text = re.sub(r"\.L_(x_)?\d+", lambda m: labels.setdefault(m.group(0), f"L{len(labels)}"), text)
        text = re.sub(r"_Z\w+", "SYMBOL", text)
        text = re.sub(r"\$\S+", "SYMBOL", text)
        text = " ".join(text.split())
        if text:
            body.append(text)
    return body


def attribute_values(lines):
    """An attribute entry's values: its words, bytes and shorts, without alignment, the entry's
    length (a difference of two labels) or labels; index@(symbol) words dropped."""
    values = []
    for text in normalise(lines):
        if re.match(r"^\.(byte|short|word)\b", text) and "index@" not in text and " - " not in text:
            values.append(text)
    return values


def sized(lines):
    """A data section's alignment and size (.align and .zero lines), for shared memory and the
    parameter bank: what a kernel reserves, whatever the printing around it."""
    lines = normalise(lines)
    align = max([int(t.split()[1], 0) for t in lines if t.startswith(".align ")] or [0])
    size = sum(int(t.split()[1], 0) for t in lines if t.startswith(".zero "))
    return [f"align {align}, {size} bytes"]


# The sections that belong to one kernel (or device function) by name, and how each is compared:
# its code (with the section's flags and register count), its attribute entries, its static shared
# memory and its parameter bank (alignment and size).
KERNEL_SECTIONS = {
    # The symbol's binding (.global where the kernel left an anonymous namespace) and where the
    # section's own label is printed are set aside.
    ".text.": lambda lines: [t for t in normalise(lines)
                             if not t.startswith((".global", ".weak", ".local", ".text.SYMBOL:"))],
    ".nv.info.": lambda lines: entries(lines),
    ".nv.shared.": sized,
    ".nv.constant0.": sized,
}
PART_NAMES = {".text.": "machine code", ".nv.info.": "kernel attributes",
              ".nv.shared.": "static shared memory", ".nv.constant0.": "parameter bank",
              ".nv.info": "registers, frame and stack"}
# A part a kernel lacks compares as this (a kernel without a shared-memory section has none).
ABSENT = {".nv.shared.": ["align 0, 0 bytes"], ".nv.constant0.": ["align 0, 0 bytes"]}


def part(kernel, name):
    return kernel.get(name, ABSENT.get(name, []))


def entries(lines, by_symbol=False):
    """The attribute entries ("//----- nvinfo : EIATTR_X" and the values after it) of an info
    section: a list of "EIATTR_X values", or with by_symbol, {symbol: list} for the entries whose
    first word is index@(symbol) (the cubin-wide table)."""
    out, entry, attribute = ({} if by_symbol else []), [], None

    def close():
        if attribute is None:
            return
        item = f"{attribute} {' '.join(attribute_values(entry))}"
        if by_symbol:
            ref = next((m.group(1) for m in (re.search(r"index@\((_Z\w+)\)", t) for t in entry) if m), None)
            if ref:
                out.setdefault(ref, []).append(item)
        else:
            out.append(item)

    for text in lines:
        m = re.match(r"//----- nvinfo : (\w+)", text)
        if m:
            close()
            entry, attribute = [], m.group(1)
        else:
            entry.append(text)
    close()
    return out


def kernels(nvdisasm, cubins):
    """{canonical kernel name: {part: [normalised lines]}} over the cubins."""
    result = {}
    for cubin in cubins:
        run = subprocess.run([nvdisasm, cubin], capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"nvdisasm {cubin}: {run.stderr.strip()}")
        sections, current = {}, None
        for line in run.stdout.split("\n"):
            m = re.match(r"\s*\.section\s+(\.[^,]+),", line)
            if m:
                current = m.group(1)
                sections.setdefault(current, [])
                continue
            if current is not None and not line.lstrip().startswith("//---------"):
                sections[current].append(line.strip())
        parts = {}  # mangled name -> {part: lines}
        for name, lines in sections.items():
            for prefix, compared in KERNEL_SECTIONS.items():
                if name.startswith(prefix) and name[len(prefix):].startswith("_Z"):
                    parts.setdefault(name[len(prefix):], {})[prefix] = compared(lines)
        for symbol, items in entries(sections.get(".nv.info", []), by_symbol=True).items():
            parts.setdefault(symbol, {})[".nv.info"] = items
        names = demangle(list(parts))
        for mangled, kernel in parts.items():
            name = canonical_name(names.get(mangled, mangled))
            if name in result:
                fail(f"{name} appears twice among {' '.join(cubins)}")
            result[name] = kernel
    return result


def compare(nvdisasm, label, a_cubins, b_cubins, code_only=False):
    """Prints the differences; True when none counts (with code_only, only machine code and
    missing kernels count)."""
    a, b = kernels(nvdisasm, a_cubins), kernels(nvdisasm, b_cubins)
    bad = 0
    for name in sorted(set(a) | set(b)):
        if name not in b:
            print(f"  only before: {name}")
            bad += 1
            continue
        if name not in a:
            print(f"  only after: {name}")
            bad += 1
            continue
        parts = sorted(k for k in set(a[name]) | set(b[name]) if part(a[name], k) != part(b[name], k))
        if not parts:
            continue
        said = []
        for k in parts:
            if k in ABSENT:  # sizes: say them
                said.append(f"{PART_NAMES[k]} {part(a[name], k)[0]} -> {part(b[name], k)[0]}")
            elif k == ".text.":
                said.append(f"machine code, {len(part(a[name], k))} / {len(part(b[name], k))} lines")
            else:
                said.append(PART_NAMES.get(k, k))
        print(f"  differs: {name} ({'; '.join(said)})")
        if ".text." in parts or not code_only:
            bad += 1
    common = [n for n in a if n in b]
    code = sum(1 for n in common if part(a[n], ".text.") == part(b[n], ".text."))
    every = sum(1 for n in common
                if all(part(a[n], k) == part(b[n], k) for k in set(a[n]) | set(b[n])))
    print(f"{label}: {len(a)} kernels before, {len(b)} after; {code} with the same machine code, "
          f"{every} the same in every part compared")
    return bad == 0


def cuda_objects(build):
    """The build's CUDA object targets (ninja's list, read once)."""
    listing = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True,
                             text=True).stdout
    return [l.split(":")[0] for l in listing.split("\n") if l.split(":")[0].endswith(".cu.o")]


def compile_command(build, objects, family):
    """The nvcc command of the family's first object in the build, as an argument list."""
    target = next((o for o in objects if f"/kernels/{family}/" in o), None)
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
    p.add_argument("--code-only", action="store_true",
                   help="fail on machine code and missing kernels only (still print the rest)")
    p.add_argument("base", nargs="?")
    p.add_argument("families", nargs="*")
    args = p.parse_args()
    nvdisasm = find_nvdisasm()
    if args.which:
        print(nvdisasm)
        return
    if args.cubins:
        ok = compare(nvdisasm, "cubins", args.cubins[0].split(), args.cubins[1].split(),
                     args.code_only)
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
        objects = cuda_objects(args.build)
        for family in families:
            template = compile_command(args.build, objects, family)
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
            ok = compare(nvdisasm, f"kernels/{family}", *sides, code_only=args.code_only) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
