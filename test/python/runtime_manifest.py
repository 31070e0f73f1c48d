# RUN: %python %s | FileCheck %s
"""fa4.runtime without a GPU: manifests, kernel choice, grid, parameters,
tensor maps and the launch sequence against a fake libcuda."""

import atexit
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import fa4
from fa4 import runtime

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
from manifests import dense_params  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-runtime-"))
atexit.register(shutil.rmtree, TMP, True)


def manifest(kernel, element="bf16", heads_q=4, heads_kv=2, head_dim=64, pack=2,
             causal=True, lse=True, cluster=(1, 1, 1), arch="sm_100a", sink=False):
    """A manifest as fa4-compile writes it (see /tmp/smallk/*.json)."""
    def op(name, heads):
        return {"name": name, "element": element, "shape": [-1, -1, heads, head_dim]}

    def tmap(name, index, packed):
        heads = pack if packed else 1
        return {"operand": name, "operand_index": index, "element": element,
                "box": [64, heads, 128 // heads, 1], "swizzle": "128B", "oob_fill": "zero"}

    params = dense_params()
    operands = [op("query", heads_q), op("key", heads_kv), op("value", heads_kv),
                op("output", heads_q)]
    if lse:
        operands.append({"name": "lse", "element": "f32", "shape": [-1, heads_q, -1]})
        params.append({"kind": "pointer", "name": "lse", "source": "lse.data"})
    if sink:
        operands.append({"name": "sink", "element": "f32", "shape": [heads_q]})
        params.append({"kind": "pointer", "name": "sink", "source": "sink.data"})
    return {
        "kernel": kernel, "arch": arch, "block": [512, 1, 1], "cluster": list(cluster),
        "dynamic_smem_bytes": 197632,
        "files": {"cubin": f"{kernel}.cubin", "ptx": f"{kernel}.ptx"},
        "grid": {"rule": "persistent", "head_blocks": heads_q // pack,
                 "query_rows_per_cta": 256},
        "causal": causal, "scale": 0.125, "scale_log2": 0.18033688011112042,
        "operands": operands, "params": params,
        "tensor_maps": [tmap("query", 0, True), tmap("key", 1, False),
                        tmap("value", 2, False), tmap("output", 3, True)],
        "plan": "#fa4.plan<...>", "mbarriers": 30, "named_barriers": 2,
        "tmem_columns": 512, "ptxas": {"registers": 128, "static_smem_bytes": 1024},
    }


(TMP / "gqa_causal_lse.json").write_text(json.dumps(manifest("gqa_causal_lse")))
(TMP / "gqa_causal_lse.cubin").write_bytes(b"\x7fELF" + bytes(60))
(TMP / "mha_f16.json").write_text(json.dumps(
    manifest("mha_f16", element="f16", heads_q=2, heads_kv=2, pack=1, causal=False,
             lse=False)))
(TMP / "mha_f16.cubin").write_bytes(b"\x7fELF" + bytes(28))
(TMP / "broken.json").write_text("{not json")
(TMP / "other.json").write_text(json.dumps({"name": "a config, not a manifest"}))

# --- import fa4 without libcuda (and without torch) ------------------------
probe = f"""
import sys, fa4
print("import fa4: runtime", "fa4.runtime" in sys.modules, "torch", "torch" in sys.modules)
kernel = fa4.KernelDirectory({str(TMP)!r}).find("bf16", 4, 2, 64, causal=True, lse=True)
print("chose", kernel.name, "grid", kernel.grid(2, 300, sm_count=148))
print("driver", fa4.runtime._driver, "libcuda mapped",
      "libcuda" in open("/proc/self/maps").read(), "torch", "torch" in sys.modules)
try:
    fa4.runtime.driver()
except fa4.CudaError as err:
    print("CudaError:", err)
"""
env = dict(os.environ, FA4_LIBCUDA="/nonexistent/libcuda.so.1")
print(subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                     text=True).stdout + "--")
# CHECK: import fa4: runtime False torch False
# CHECK-NEXT: chose gqa_causal_lse grid (8, 1, 1)
# CHECK-NEXT: driver None libcuda mapped False torch False
# CHECK-NEXT: CudaError: dlopen(/nonexistent/libcuda.so.1) failed: OSError (/nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory; is the NVIDIA driver installed? FA4_LIBCUDA names another libcuda)
# CHECK-NEXT: --

# --- manifests and the directory -------------------------------------------
directory = runtime.KernelDirectory(TMP)
print("kernels:", [repr(k) for k in directory])
for name, why in directory.errors:
    print("error:", name, "|", why)
# CHECK: kernels: ['<fa4 kernel gqa_causal_lse sm_100a bf16 heads 4/2 head_dim 64 causal True scale 0.125 lse True>', '<fa4 kernel mha_f16 sm_100a f16 heads 2/2 head_dim 64 causal False scale 0.125 lse False>']
# CHECK-NEXT: error: broken.json | not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)
# CHECK-NEXT: error: other.json | not a launch manifest: missing kernel, arch, block, dynamic_smem_bytes, grid, operands, params, tensor_maps

gqa = runtime.Kernel.load(TMP / "gqa_causal_lse.json")
print("params:", gqa.params)
print("block", gqa.block, "cluster", gqa.cluster, "smem", gqa.dynamic_smem_bytes,
      "static", gqa.static_smem_bytes, "image", gqa.image_path().name)
# CHECK: params: [('query_map', 'tensor_map', 0), ('key_map', 'tensor_map', 1), ('value_map', 'tensor_map', 2), ('output_map', 'tensor_map', 3), ('batch', 'i32', ('query', 0)), ('seq_q', 'i32', ('query', 1)), ('seq_kv', 'i32', ('key', 1)), ('scale_log2', 'f32', 0.18033688011112042), ('lse', 'pointer', 'lse')]
# CHECK-NEXT: block (512, 1, 1) cluster (1, 1, 1) smem 197632 static 1024 image gqa_causal_lse.cubin

for change, label in [
        (lambda m: m["grid"].update(rule="one_cta_per_tile"), "grid rule"),
        (lambda m: m["params"].append({"kind": "i32", "name": "heads", "source": "query.heads"}),
         "param source"),
        (lambda m: m["params"].append({"kind": "f32", "name": "softcap", "source": "softcap"}),
         "f32 key"),
        (lambda m: m["tensor_maps"][0].update(operand="qkv"), "map operand"),
        (lambda m: m.update(cluster=[1, 2, 1]), "cluster"),
        (lambda m: m["operands"][1].pop("shape"), "no shape"),
        (lambda m: m.update(block=[512, 1]), "block"),
        (lambda m: m["tensor_maps"][1].update(swizzle="256B"), "swizzle"),
        (lambda m: m["tensor_maps"][1].update(box=[128, 1, 128, 1]), "inner box"),
        (lambda m: m["tensor_maps"][1].update(box=[64, 1, 512, 1]), "box"),
        (lambda m: m["tensor_maps"][1].pop("swizzle"), "no swizzle"),
        (lambda m: m["tensor_maps"][2].update(oob_fill="nan_fill"), "oob")]:
    broken = manifest("broken")
    change(broken)
    try:
        runtime.Kernel(broken)
    except runtime.ManifestError as err:
        print(f"{label}: {err}")
# CHECK: grid rule: grid rule 'one_cta_per_tile' is unknown (the runtime knows 'persistent' and 'persistent_varlen')
# CHECK-NEXT: param source: param 'heads': cannot resolve kind 'i32' from source 'query.heads'
# CHECK-NEXT: f32 key: param 'softcap': cannot resolve kind 'f32' from source 'softcap'
# CHECK-NEXT: map operand: tensor_maps[0] names operand 'qkv' the manifest does not list
# CHECK-NEXT: cluster: cluster [1, 2, 1]: the grid is 1-D, so only [n, 1, 1] clusters can divide it
# CHECK-NEXT: no shape: malformed manifest: KeyError: 'shape'
# CHECK-NEXT: block: 'block' must be a list of 3 integers, got [512, 1]
# CHECK-NEXT: swizzle: tensor map of 'key': swizzle '256B' is not one of ['128B', '32B', '64B', 'none']
# CHECK-NEXT: inner box: tensor map of 'key': the inner box of 256 bytes must be a multiple of 16 and fit the 128B swizzle
# CHECK-NEXT: box: tensor map of 'key': box [64, 1, 512, 1] must be 1 to 5 sizes in [1, 256]
# CHECK-NEXT: no swizzle: tensor map of 'key': swizzle None is not one of ['128B', '32B', '64B', 'none']
# CHECK-NEXT: oob: tensor map of 'value': oob_fill 'nan_fill' is not one of ['nan', 'zero']

# --- choosing a kernel -----------------------------------------------------
print("found", directory.find("bf16", 4, 2, 64, causal=True, lse=True, arch="sm_100a").name)
print("found", directory.find("f16", 2, 2, 64, scale=0.125 * (1 + 1e-7)).name)
# CHECK: found gqa_causal_lse
# CHECK-NEXT: found mha_f16
print("matches", gqa.matches(dtype="bf16", heads_q=4), gqa.matches(dtype="f16"))
# CHECK-NEXT: matches True False
# Which devices an arch runs on: 'a' only its own, 'f' its family, plain any later.
for arch in ("sm_100a", "sm_100f", "sm_100"):
    k = runtime.Kernel(manifest("k", arch=arch))
    print(arch, "runs on", [c for c in ((9, 0), (10, 0), (10, 3), (12, 0)) if k.runs_on(c)],
          "found for sm_103a:", k.matches(arch="sm_103a"))
# CHECK-NEXT: sm_100a runs on [(10, 0)] found for sm_103a: False
# CHECK-NEXT: sm_100f runs on [(10, 0), (10, 3)] found for sm_103a: True
# CHECK-NEXT: sm_100 runs on [(10, 0), (10, 3), (12, 0)] found for sm_103a: True
try:
    directory.find("bf16", 32, 8, 128, causal=True, lse=False, arch="sm_90a")
except LookupError as err:
    print(err.args[0])
# CHECK: no fa4 kernel in {{.*}}fa4-runtime-{{.*}} for dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=False arch=sm_90a window=(-1, 0) softcap=0.0 sink=False; candidates:
# CHECK-NEXT:   gqa_causal_lse (gqa_causal_lse.json): heads_q is 4, not 32; heads_kv is 2, not 8; head_dim is 64, not 128; lse is True, not False; arch is sm_100a, not sm_90a
# CHECK-NEXT:   mha_f16 (mha_f16.json): dtype is f16, not bf16; heads_q is 2, not 32; heads_kv is 2, not 8; head_dim is 64, not 128; causal is False, not True; arch is sm_100a, not sm_90a
# Any scale: the kernel takes it as an argument.
print("any scale:", directory.find("f16", 2, 2, 64, scale=0.1).name)
try:
    directory.find("f16", 2, 2, 64, lse=True, scale=0.1)
except LookupError as err:
    print(err.args[0])
# CHECK: any scale: mha_f16
# CHECK-NEXT: no fa4 kernel in {{.*}} for dtype=f16 heads_q=2 heads_kv=2 head_dim=64 causal=False scale=0.1 lse=True arch=None window=(-1, -1) softcap=0.0 sink=False; candidates:
# CHECK-NEXT:   gqa_causal_lse (gqa_causal_lse.json): dtype is bf16, not f16; heads_q is 4, not 2; causal is True, not False
# CHECK-NEXT:   mha_f16 (mha_f16.json): lse is False, not True
# CHECK-NEXT:   broken.json: not a usable manifest: not JSON
# CHECK-NEXT:   other.json: not a usable manifest: not a launch manifest: missing kernel
# Windows and softcap: a kernel computes only the masking it was built with
# (a softcap or none; its value is an argument); causal folds into the
# window, bounds past 2^31 - 257 are unbounded.
windowed = manifest("w", causal=True)
windowed.update(window=[255, 0], softcap=30.0, score_cap=240.0)
windowed["params"].append({"kind": "f32", "name": "score_cap", "source": "score_cap"})
windowed = runtime.Kernel(windowed)
print(windowed)
print("window", windowed.matches(causal=True, window=(255, 0), softcap=30.0),
      windowed.matches(causal=True, window=(255, -1), softcap=30.0 * (1 + 1e-7)),
      windowed.matches(causal=True, softcap=30.0),
      windowed.matches(causal=True, window=(-1, -1), softcap=30.0),
      windowed.matches(causal=True, window=(255, 0), softcap=0.0))
print(windowed.mismatches(causal=True, window=(128, 0), softcap=20.0),
      windowed.mismatches(softcap=0.0), gqa.mismatches(softcap=20.0))
print("effective", runtime.effective_window((1 << 40, 3)), runtime.effective_window((-5, 7)),
      runtime.effective_window((100, -1), causal=True))
for bad in [(1, 2, 3), "ab", (4, 5)]:
    try:
        runtime.effective_window(bad, causal=True)
    except ValueError as err:
        print("bad window:", err)
# CHECK: <fa4 kernel w sm_100a bf16 heads 4/2 head_dim 64 causal True window (255, 0) softcap 30.0 scale 0.125 lse True>
# CHECK-NEXT: window True True True False False
# CHECK-NEXT: ['window is (255, 0), not (128, 0)'] ['it has a softcap'] ['it has no softcap']
# CHECK-NEXT: effective (-1, 3) (-1, 7) (100, 0)
# CHECK-NEXT: bad window: window must be (left, right) integers, got (1, 2, 3)
# CHECK-NEXT: bad window: window must be (left, right) integers, got 'ab'
# CHECK-NEXT: bad window: causal attention needs window right bound 0 or -1, got 5
(TMP / "empty").mkdir()
try:
    runtime.KernelDirectory(TMP / "empty").find("bf16", 4, 2, 64)
except LookupError as err:
    print(err.args[0])
# CHECK: no fa4 kernel for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=False scale=0.125 lse=False arch=None window=(-1, -1) softcap=0.0 sink=False: {{.*}}empty has no kernel manifests (*.json)

# --- the grid --------------------------------------------------------------
# tiles = batch * head_blocks (4 heads / pack 2) * ceil(seq_q / 256)
for batch, seq_q, sms in [(3, 1000, 148), (3, 1000, 20), (1, 256, 148), (1, 257, 148),
                          (0, 1000, 148), (2, 0, 148)]:
    print(f"grid batch {batch} seq_q {seq_q} sms {sms}: {gqa.grid(batch, seq_q, sms)}")
# CHECK: grid batch 3 seq_q 1000 sms 148: (24, 1, 1)
# CHECK-NEXT: grid batch 3 seq_q 1000 sms 20: (20, 1, 1)
# CHECK-NEXT: grid batch 1 seq_q 256 sms 148: (2, 1, 1)
# CHECK-NEXT: grid batch 1 seq_q 257 sms 148: (4, 1, 1)
# CHECK-NEXT: grid batch 0 seq_q 1000 sms 148: (0, 1, 1)
# CHECK-NEXT: grid batch 2 seq_q 0 sms 148: (0, 1, 1)
clustered = runtime.Kernel(manifest("clustered", cluster=(2, 1, 1)))
print("cluster 2 grids:", clustered.grid(3, 1000, 148), clustered.grid(3, 1000, 23),
      clustered.grid(1, 100, 148))
# CHECK: cluster 2 grids: (24, 1, 1) (22, 1, 1) (2, 1, 1)

# --- parameters and tensor maps --------------------------------------------
Q, K, V, O, L = 0x7f1000000000, 0x7f2000000000, 0x7f3000000000, 0x7f4000000000, 0x7f5000000000


def operands(**changes):
    ops = {"query": (Q, (3, 1000, 4, 64), "bf16"), "key": (K, (3, 1100, 2, 64), "bf16"),
           "value": (V, (3, 1100, 2, 64), "bf16"), "output": (O, (3, 1000, 4, 64), "bf16"),
           "lse": (L, (3, 4, 1000), "f32")}
    ops.update(changes)
    return {name: op for name, op in ops.items() if op is not None}


for arg in gqa.arguments(operands()):
    if arg.kind == "tensor_map":
        m = arg.value
        print(f"{arg.name}: {m.operand} {m.describe()}; element strides "
              f"{list(m.element_strides)} rank {m.rank} data_type {m.data_type} interleave "
              f"{m.interleave} swizzle {m.swizzle} l2 {m.l2_promotion} oob {m.oob_fill}")
    else:
        print(f"{arg.name}: {arg.kind} {arg.value:#x}" if arg.kind == "pointer"
              else f"{arg.name}: {arg.kind} {arg.value}")
# CHECK: query_map: query dims [64, 4, 1000, 3], strides [128, 512, 512000] B, box [64, 2, 64, 1], address 0x7f1000000000; element strides [1, 1, 1, 1] rank 4 data_type 9 interleave 0 swizzle 3 l2 2 oob 0
# CHECK-NEXT: key_map: key dims [64, 2, 1100, 3], strides [128, 256, 281600] B, box [64, 1, 128, 1], address 0x7f2000000000; element strides [1, 1, 1, 1] rank 4 data_type 9 interleave 0 swizzle 3 l2 2 oob 0
# CHECK-NEXT: value_map: value dims [64, 2, 1100, 3], strides [128, 256, 281600] B, box [64, 1, 128, 1], address 0x7f3000000000; element strides [1, 1, 1, 1] rank 4 data_type 9 interleave 0 swizzle 3 l2 2 oob 0
# CHECK-NEXT: output_map: output dims [64, 4, 1000, 3], strides [128, 512, 512000] B, box [64, 2, 64, 1], address 0x7f4000000000; element strides [1, 1, 1, 1] rank 4 data_type 9 interleave 0 swizzle 3 l2 2 oob 0
# CHECK-NEXT: batch: i32 3
# CHECK-NEXT: seq_q: i32 1000
# CHECK-NEXT: seq_kv: i32 1100
# CHECK-NEXT: scale_log2: f32 0.18033688011112042
# CHECK-NEXT: lse: pointer 0x7f5000000000

mha = runtime.Kernel.load(TMP / "mha_f16.json")
m = runtime.tensor_map_args(mha.tensor_maps[1], (K, (1, 77, 2, 64), "f16"))
print("f16 key:", m.describe(), "data_type", m.data_type)
# CHECK: f16 key: dims [64, 2, 77, 1], strides [128, 256, 19712] B, box [64, 1, 128, 1], address 0x7f2000000000 data_type 6
# A strided view (K of a packed [B, S, 3, H, D] QKV buffer): TMA takes it.
m = runtime.tensor_map_args(mha.tensor_maps[1], (K, (1, 77, 2, 64), "f16", (77 * 384, 384, 64, 1)))
print("strided key:", m.describe())
# CHECK: strided key: dims [64, 2, 77, 1], strides [128, 768, 59136] B
l2 = dict(mha.tensor_maps[1], l2_promotion="256B", swizzle="64B", box=[32, 1, 128, 1])
m = runtime.tensor_map_args(l2, (K, (1, 77, 2, 64), "f16"))
print("overrides: l2", m.l2_promotion, "swizzle", m.swizzle, "box", list(m.box_dim))
# CHECK: overrides: l2 3 swizzle 2 box [32, 1, 128, 1]

cases = [
    ("misaligned query", operands(query=(Q + 2, (3, 1000, 4, 64), "bf16"))),
    ("head stride 68", operands(key=(K, (3, 1100, 2, 64), "bf16", (1100 * 2 * 68, 2 * 68, 68, 1)))),
    ("strided head_dim", operands(value=(V, (3, 1100, 2, 64), "bf16", (1100 * 256, 256, 128, 2)))),
    ("element", operands(query=(Q, (3, 1000, 4, 64), "f16"))),
    ("heads", operands(query=(Q, (3, 1000, 3, 64), "bf16"))),
    ("head_dim", operands(key=(K, (3, 1100, 2, 128), "bf16"))),
    ("k/v", operands(value=(V, (3, 1000, 2, 64), "bf16"))),
    ("output", operands(output=(O, (3, 999, 4, 64), "bf16"))),
    ("batch", operands(key=(K, (2, 1100, 2, 64), "bf16"), value=(V, (2, 1100, 2, 64), "bf16"))),
    ("no lse", operands(lse=None)),
    ("lse heads", operands(lse=(L, (3, 1000, 4), "f32"))),
    ("lse shape", operands(lse=(L, (3, 4, 999), "f32"))),
    ("lse address", operands(lse=(L + 2, (3, 4, 1000), "f32"))),
    ("extra", dict(operands(), bias=(0, (1,), "f32"))),
    ("no keys", operands(key=(K, (3, 0, 2, 64), "bf16"), value=(V, (3, 0, 2, 64), "bf16"))),
]
for label, ops in cases:
    try:
        gqa.arguments(ops)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK: misaligned query: query: TMA needs a 16-byte aligned global address, got 0x7f1000000002 (2 bytes past a 16-byte boundary)
# CHECK-NEXT: head stride 68: key: TMA needs byte strides that are positive multiples of 16 below 2^40, got 136 bytes for dimension 2 (strides [149600, 136, 68, 1] elements of 2 bytes)
# CHECK-NEXT: strided head_dim: value: the innermost dimension must be contiguous (stride 1) for TMA, got strides [281600, 256, 128, 2]
# CHECK-NEXT: element: query: element f16, kernel gqa_causal_lse takes bf16
# CHECK-NEXT: heads: query: dimension 2 (heads) is 3, kernel gqa_causal_lse takes 4
# CHECK-NEXT: head_dim: key: dimension 3 (head_dim) is 128, kernel gqa_causal_lse takes 64
# CHECK-NEXT: k/v: key shape [3, 1100, 2, 64] and value shape [3, 1000, 2, 64] differ
# CHECK-NEXT: output: output shape [3, 999, 4, 64] is not the query shape with the value head dim, [3, 1000, 4, 64]
# CHECK-NEXT: batch: batch: query has 3, key 2
# CHECK-NEXT: no lse: kernel gqa_causal_lse needs operand 'lse' (it was compiled with LSE)
# CHECK-NEXT: lse heads: lse: dimension 1 (heads) is 1000, kernel gqa_causal_lse takes 4
# CHECK-NEXT: lse shape: lse: shape [3, 4, 999], expected [batch, heads_q, seq_q] = [3, 4, 1000]
# CHECK-NEXT: lse address: lse: address 0x7f5000000002 is not 4-byte aligned
# CHECK-NEXT: extra: kernel gqa_causal_lse has no operand 'bias' (it takes query, key, value, output, lse)
# CHECK-NEXT: no keys: key: TMA needs every dimension in [1, 2^32], got shape [3, 0, 2, 64]


# --- launching against a fake libcuda --------------------------------------
def value(arg):
    arg = arg.value if isinstance(arg, ctypes._SimpleCData) else arg
    return arg or 0


class FakeCuda:
    """The libcuda functions the runtime calls, as Python: each logs its
    arguments as the runtime passed them through ctypes."""
    ERRORS = {1: ("CUDA_ERROR_INVALID_VALUE", "invalid argument"),
              209: ("CUDA_ERROR_NO_BINARY_FOR_GPU",
                    "no kernel image is available for execution on the device")}

    def __init__(self, capability=(10, 0), sms=148, current=None, fail=None):
        self.capability, self.sms = capability, sms
        self.current = current        # (context, device) current on the thread
        self.fail = fail or {}
        self.log, self.memory, self.kinds = [], {}, []

    def _done(self, name, text):
        self.log.append(f"{name}({text})")
        return self.fail.get(name, 0)

    def cuGetErrorName(self, code, out):
        out._obj.value = self.ERRORS[code][0].encode()
        return 0

    def cuGetErrorString(self, code, out):
        out._obj.value = self.ERRORS[code][1].encode()
        return 0

    def cuInit(self, flags):
        return self._done("cuInit", value(flags))

    def cuDeviceGet(self, out, ordinal):
        out._obj.value = value(ordinal)
        return self._done("cuDeviceGet", value(ordinal))

    def cuDeviceGetAttribute(self, out, attribute, device):
        out._obj.value = {75: self.capability[0], 76: self.capability[1], 16: self.sms,
                          97: 232448}[value(attribute)]
        return self._done("cuDeviceGetAttribute", f"{value(attribute)}, {value(device)}")

    def cuCtxGetCurrent(self, out):
        out._obj.value = self.current[0] if self.current else None
        return self._done("cuCtxGetCurrent", "")

    def cuCtxGetDevice(self, out):
        out._obj.value = self.current[1]
        return self._done("cuCtxGetDevice", "")

    def cuDevicePrimaryCtxRetain(self, out, device):
        out._obj.value = 0xC000 + value(device)
        return self._done("cuDevicePrimaryCtxRetain", value(device))

    def cuCtxSetCurrent(self, context):
        self.current = (value(context), value(context) - 0xC000)
        return self._done("cuCtxSetCurrent", hex(value(context)))

    def cuModuleLoadData(self, out, image):
        out._obj.value = 0x1000
        return self._done("cuModuleLoadData", f"{len(image)} bytes {image[:4]!r}")

    def cuModuleGetFunction(self, out, module, name):
        out._obj.value = 0x2000
        return self._done("cuModuleGetFunction", f"{hex(value(module))}, {name.decode()}")

    def cuFuncSetAttribute(self, function, attribute, number):
        return self._done("cuFuncSetAttribute",
                          f"{hex(value(function))}, {value(attribute)}, {value(number)}")

    def cuTensorMapEncodeTiled(self, out, data_type, rank, address, dims, strides, box,
                               element_strides, interleave, swizzle, l2, oob):
        n = value(rank)
        # A recognizable descriptor: the global address, then 120 bytes of 0xAB.
        ctypes.memmove(value(out), value(address).to_bytes(8, "little") + b"\xab" * 120, 128)
        return self._done("cuTensorMapEncodeTiled", (
            f"map%64={value(out) % 64}, type {value(data_type)}, rank {n}, "
            f"{hex(value(address))}, dims {list(dims)}, strides {list(strides)}, "
            f"box {list(box)}, estrides {list(element_strides)}, {value(interleave)}, "
            f"{value(swizzle)}, {value(l2)}, {value(oob)}"))

    def cuMemAllocAsync(self, out, size, stream):
        out._obj.value = 0x7e0000000000
        return self._done("cuMemAllocAsync", f"{value(size)}, {hex(value(stream))}")

    def cuMemcpyHtoDAsync_v2(self, destination, source, size, stream):
        data = ctypes.string_at(value(source), value(size))
        self.memory[value(destination)] = data
        maps = [hex(int.from_bytes(data[i:i + 8], "little")) for i in range(0, len(data), 128)]
        return self._done("cuMemcpyHtoDAsync_v2", f"{hex(value(destination))}, "
                          f"{value(size)} bytes of maps over {maps}, {hex(value(stream))}")

    def cuLaunchKernelEx(self, config, function, params, extra):
        c = config._obj
        attrs = [(c.attrs[i].id, c.attrs[i].value.clusterDim.x, c.attrs[i].value.clusterDim.y,
                  c.attrs[i].value.clusterDim.z) for i in range(c.numAttrs)]
        decoded = []
        for i, kind in enumerate(self.kinds):
            ctype = {"i32": ctypes.c_int32, "f32": ctypes.c_float}.get(kind, ctypes.c_uint64)
            decoded.append(ctype.from_address(params[i]).value)
        decoded = [hex(d) if isinstance(d, int) and d > 2 ** 20 else d for d in decoded]
        return self._done("cuLaunchKernelEx", (
            f"grid ({c.gridDimX}, {c.gridDimY}, {c.gridDimZ}), block ({c.blockDimX}, "
            f"{c.blockDimY}, {c.blockDimZ}), smem {c.sharedMemBytes}, stream "
            f"{hex(c.hStream or 0)}, attrs {attrs}, function {hex(value(function))}, "
            f"params {decoded}, extra {extra}"))

    def cuMemFreeAsync(self, pointer, stream):
        return self._done("cuMemFreeAsync", f"{hex(value(pointer))}, {hex(value(stream))}")

    def cuModuleUnload(self, module):
        return self._done("cuModuleUnload", hex(value(module)))


def launch(kernel, fake, ops, **kwargs):
    if runtime._driver is None or runtime._driver._lib is not fake:
        runtime.set_driver(fake)
    fake.kinds = [kind for _, kind, _ in kernel.params]
    fake.log.clear()
    try:
        grid = kernel.launch(ops, **kwargs)
        print("launched, grid", grid)
    except (RuntimeError, ValueError, OSError) as err:
        print(f"{type(err).__name__}: {err}")
    print("\n".join(fake.log))
    print("--")


fake = FakeCuda()
launch(gqa, fake, operands(), stream=0x5000)
# CHECK: launched, grid (24, 1, 1)
# CHECK-NEXT: cuInit(0)
# CHECK-NEXT: cuCtxGetCurrent()
# CHECK-NEXT: cuDeviceGet(0)
# CHECK-NEXT: cuDevicePrimaryCtxRetain(0)
# CHECK-NEXT: cuCtxSetCurrent(0xc000)
# CHECK-NEXT: cuDeviceGetAttribute(75, 0)
# CHECK-NEXT: cuDeviceGetAttribute(76, 0)
# CHECK-NEXT: cuDeviceGetAttribute(16, 0)
# CHECK-NEXT: cuDeviceGetAttribute(97, 0)
# CHECK-NEXT: cuModuleLoadData(64 bytes b'\x7fELF')
# CHECK-NEXT: cuModuleGetFunction(0x1000, gqa_causal_lse)
# CHECK-NEXT: cuFuncSetAttribute(0x2000, 8, 197632)
# CHECK-NEXT: cuTensorMapEncodeTiled(map%64=0, type 9, rank 4, 0x7f1000000000, dims [64, 4, 1000, 3], strides [128, 512, 512000], box [64, 2, 64, 1], estrides [1, 1, 1, 1], 0, 3, 2, 0)
# CHECK-NEXT: cuTensorMapEncodeTiled(map%64=0, type 9, rank 4, 0x7f2000000000, dims [64, 2, 1100, 3], strides [128, 256, 281600], box [64, 1, 128, 1], estrides [1, 1, 1, 1], 0, 3, 2, 0)
# CHECK-NEXT: cuTensorMapEncodeTiled(map%64=0, type 9, rank 4, 0x7f3000000000, dims [64, 2, 1100, 3], strides [128, 256, 281600], box [64, 1, 128, 1], estrides [1, 1, 1, 1], 0, 3, 2, 0)
# CHECK-NEXT: cuTensorMapEncodeTiled(map%64=0, type 9, rank 4, 0x7f4000000000, dims [64, 4, 1000, 3], strides [128, 512, 512000], box [64, 2, 64, 1], estrides [1, 1, 1, 1], 0, 3, 2, 0)
# CHECK-NEXT: cuMemAllocAsync(512, 0x5000)
# CHECK-NEXT: cuMemcpyHtoDAsync_v2(0x7e0000000000, 512 bytes of maps over ['0x7f1000000000', '0x7f2000000000', '0x7f3000000000', '0x7f4000000000'], 0x5000)
# CHECK-NEXT: cuLaunchKernelEx(grid (24, 1, 1), block (512, 1, 1), smem 197632, stream 0x5000, attrs [], function 0x2000, params ['0x7e0000000000', '0x7e0000000080', '0x7e0000000100', '0x7e0000000180', 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000'], extra None)
# CHECK-NEXT: --

# The same operands on the same stream: the remembered launch, maps and all,
# found before any check: the current context is the one query.
launch(gqa, fake, operands(), stream=0x5000)
# CHECK: launched, grid (24, 1, 1)
# CHECK-NEXT: cuCtxGetCurrent()
# CHECK-NEXT: cuLaunchKernelEx(grid (24, 1, 1), block (512, 1, 1), smem 197632, stream 0x5000, attrs [], function 0x2000, params ['0x7e0000000000', '0x7e0000000080', '0x7e0000000100', '0x7e0000000180', 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000'], extra None)
# CHECK-NEXT: --

# Again: the module, context and device are known; only the maps and the launch.
launch(gqa, fake, operands(query=(Q, (1, 100, 4, 64), "bf16"), output=(O, (1, 100, 4, 64), "bf16"),
                           key=(K, (1, 100, 2, 64), "bf16"), value=(V, (1, 100, 2, 64), "bf16"),
                           lse=(L, (1, 4, 100), "f32")))
# CHECK: launched, grid (2, 1, 1)
# CHECK-NEXT: cuCtxGetCurrent()
# CHECK-NEXT: cuCtxGetDevice()
# CHECK-NEXT: cuTensorMapEncodeTiled(map%64=0, type 9, rank 4, 0x7f1000000000, dims [64, 4, 100, 1], strides [128, 512, 51200]
# CHECK: cuMemAllocAsync(512, 0x0)
# CHECK: cuLaunchKernelEx(grid (2, 1, 1), block (512, 1, 1), smem 197632, stream 0x0, attrs [], function 0x2000, params ['0x7e0000000000', '0x7e0000000080', '0x7e0000000100', '0x7e0000000180', 1, 100, 100,
# CHECK-NEXT: --

# At most LAUNCH_CACHE_SIZE launches are remembered: the oldest one's maps
# are freed on its stream when another is added; close() frees the rest.
gqa.LAUNCH_CACHE_SIZE = 2
launch(gqa, fake, operands(query=(Q, (1, 200, 4, 64), "bf16"), output=(O, (1, 200, 4, 64), "bf16"),
                           key=(K, (1, 100, 2, 64), "bf16"), value=(V, (1, 100, 2, 64), "bf16"),
                           lse=(L, (1, 4, 200), "f32")))
# CHECK: launched, grid (2, 1, 1)
# CHECK: cuMemAllocAsync(512, 0x0)
# CHECK-NEXT: cuMemcpyHtoDAsync_v2
# CHECK-NEXT: cuMemFreeAsync(0x7e0000000000, 0x5000)
# CHECK-NEXT: cuLaunchKernelEx(grid (2, 1, 1)
# CHECK-NEXT: --
fake.log.clear()
gqa.close()
print("\n".join(fake.log))
# CHECK-NEXT: cuMemFreeAsync(0x7e0000000000, 0x0)
# CHECK-NEXT: cuMemFreeAsync(0x7e0000000000, 0x0)
# CHECK-NEXT: cuModuleUnload(0x1000)

# --- the remembered launch: what its key holds ------------------------------
# A call equal to a remembered launch in everything the launch is made of is
# that launch (one cuCtxGetCurrent, one cuLaunchKernelEx); a change of any
# part misses, runs the checks and launches with the new values.
class BlocksCuda(FakeCuda):
    """Hands out a new tensor-map block per allocation, so that frees say
    which launch was forgotten."""
    blocks = 0

    def cuMemAllocAsync(self, out, size, stream):
        rc = super().cuMemAllocAsync(out, size, stream)
        out._obj.value = 0x7e0000000000 + 0x1000 * BlocksCuda.blocks
        BlocksCuda.blocks += 1
        return rc


(TMP / "w.json").write_text(json.dumps(windowed.manifest))
(TMP / "w.cubin").write_bytes(b"\x7fELF")
cached = runtime.Kernel.load(TMP / "gqa_causal_lse.json")
capped = runtime.Kernel.load(TMP / "w.json")
bfake = BlocksCuda()


def again(label, kernel, ops, **kwargs):
    """One launch: the driver calls by name (xN for N in a row), the tensor
    maps' addresses and strides when encoded, and the parameters."""
    runtime.set_driver(bfake) if runtime._driver is None or runtime._driver._lib is not bfake else None
    bfake.kinds = [kind for _, kind, _ in kernel.params]
    bfake.log.clear()
    try:
        kernel.launch(ops, **kwargs)
    except (RuntimeError, ValueError) as err:
        print(f"{label}: {type(err).__name__}: {err}")
        return
    names = []
    for entry in bfake.log:
        name = entry.split("(")[0]
        if names and names[-1][0] == name:
            names[-1][1] += 1
        else:
            names.append([name, 1])
    text = " ".join(n if c == 1 else f"{n}x{c}" for n, c in names)
    maps = [e.split(", ")[3] + " " + e.split("strides ")[1].split("]")[0] + "]"
            for e in bfake.log if e.startswith("cuTensorMapEncodeTiled")][:1]
    launched = [e for e in bfake.log if e.startswith("cuLaunchKernelEx")][-1]
    stream = launched.split("stream ")[1].split(",")[0]
    params = launched.split("params ")[1].split(", extra")[0]
    print(f"{label}: {text}; {'query map ' + maps[0] + '; ' if maps else ''}stream {stream} "
          f"params {params}")


again("first", cached, operands(), stream=0x5000)
again("same", cached, operands(), stream=0x5000)
again("operands anew", cached, {name: tuple(op) for name, op in operands().items()},
      stream=0x5000)
again("lse address", cached, operands(lse=(L + 0x100, (3, 4, 1000), "f32")), stream=0x5000)
again("query address", cached, operands(query=(Q + 0x100, (3, 1000, 4, 64), "bf16")),
      stream=0x5000)
again("key length", cached, operands(key=(K, (3, 1200, 2, 64), "bf16"),
                                     value=(V, (3, 1200, 2, 64), "bf16")), stream=0x5000)
again("query strides", cached, operands(query=(Q, (3, 1000, 4, 64), "bf16",
                                               (256000, 64, 64000, 1))), stream=0x5000)
again("stream", cached, operands(), stream=0x6000)
again("scale", cached, operands(), stream=0x5000, scale=0.25)
again("scale 1", cached, operands(), stream=0x5000, scale=1)
again("scale True", cached, operands(), stream=0x5000, scale=True)
again("device 0", cached, operands(), stream=0x5000, device=0)
again("device 0 again", cached, operands(), stream=0x5000, device=0)
# CHECK-LABEL: first: cuInit cuCtxGetCurrent cuDeviceGet cuDevicePrimaryCtxRetain cuCtxSetCurrent cuDeviceGetAttributex4 cuModuleLoadData cuModuleGetFunction cuFuncSetAttribute cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; query map 0x7f1000000000 [128, 512, 512000]; stream 0x5000 params ['0x7e0000000000', '0x7e0000000080', '0x7e0000000100', '0x7e0000000180', 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000']
# CHECK-NEXT: same: cuCtxGetCurrent cuLaunchKernelEx; stream 0x5000 params ['0x7e0000000000', '0x7e0000000080', '0x7e0000000100', '0x7e0000000180', 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000']
# CHECK-NEXT: operands anew: cuCtxGetCurrent cuLaunchKernelEx; stream 0x5000 params ['0x7e0000000000',
# CHECK-NEXT: lse address: cuCtxGetCurrent cuCtxGetDevice cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; query map 0x7f1000000000 [128, 512, 512000]; stream 0x5000 params ['0x7e0000001000', '0x7e0000001080', '0x7e0000001100', '0x7e0000001180', 3, 1000, 1100, 0.1803368777036667, '0x7f5000000100']
# CHECK-NEXT: query address: {{.*}}cuLaunchKernelEx; query map 0x7f1000000100 [128, 512, 512000]; stream 0x5000 params ['0x7e0000002000', {{.*}}, 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000']
# CHECK-NEXT: key length: {{.*}}cuLaunchKernelEx; query map 0x7f1000000000 [128, 512, 512000]; stream 0x5000 params ['0x7e0000003000', {{.*}}, 3, 1000, 1200, 0.1803368777036667, '0x7f5000000000']
# CHECK-NEXT: query strides: {{.*}}cuLaunchKernelEx; query map 0x7f1000000000 [128000, 128, 512000]; stream 0x5000 params ['0x7e0000004000', {{.*}}, 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000']
# CHECK-NEXT: stream: cuCtxGetCurrent cuCtxGetDevice cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; query map 0x7f1000000000 [128, 512, 512000]; stream 0x6000 params ['0x7e0000005000', {{.*}}, 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000']
# CHECK-NEXT: scale: {{.*}}cuLaunchKernelEx; {{.*}} params ['0x7e0000006000', {{.*}}, 3, 1000, 1100, 0.3606737554073334, '0x7f5000000000']
# CHECK-NEXT: scale 1: {{.*}}cuLaunchKernelEx; {{.*}} params ['0x7e0000007000', {{.*}}, 3, 1000, 1100, 1.4426950216293335, '0x7f5000000000']
# CHECK-NEXT: scale True: ValueError: scale must be a real number, got True
# CHECK-NEXT: device 0: cuCtxGetCurrent cuDeviceGet cuCtxGetDevice cuTensorMapEncodeTiledx4 {{.*}} params ['0x7e0000008000',
# CHECK-NEXT: device 0 again: cuCtxGetCurrent cuLaunchKernelEx; stream 0x5000 params ['0x7e0000008000',

# Another context current: a miss (this context's module is loaded), and
# the first context's launch again once it is current again.
bfake.current = (0xC001, 1)
again("context 0xc001", cached, operands(), stream=0x5000)
again("context 0xc001 again", cached, operands(), stream=0x5000)
bfake.current = (0xC000, 0)
again("context 0xc000", cached, operands(), stream=0x5000)
# CHECK-NEXT: context 0xc001: cuCtxGetCurrent cuCtxGetDevice cuDeviceGetAttributex4 cuModuleLoadData {{.*}} params ['0x7e0000009000',
# CHECK-NEXT: context 0xc001 again: cuCtxGetCurrent cuLaunchKernelEx; stream 0x5000 params ['0x7e0000009000',
# CHECK-NEXT: context 0xc000: cuCtxGetCurrent cuLaunchKernelEx; stream 0x5000 params ['0x7e0000000000',

# The softcap is a value of the call, as the scale.
again("softcap 30", capped, operands(), stream=0x5000)
again("softcap 50", capped, operands(), stream=0x5000, softcap=50.0)
again("softcap 50 again", capped, operands(), stream=0x5000, softcap=50.0)
# CHECK-NEXT: softcap 30: {{.*}}cuLaunchKernelEx; {{.*}} params [{{.*}}, 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000', 240.0]
# CHECK-NEXT: softcap 50: {{.*}}cuTensorMapEncodeTiledx4 {{.*}} params [{{.*}}, 3, 1000, 1100, 0.1803368777036667, '0x7f5000000000', 400.0]
# CHECK-NEXT: softcap 50 again: cuCtxGetCurrent cuLaunchKernelEx; {{.*}} 400.0]

# Operands that cannot be a key as given (a list shape) are checked each
# time, then found under their checked form: no maps the second time.
listed = operands(query=(Q, [3, 1000, 4, 64], "bf16"))
again("list shape", cached, listed, stream=0x5000)
again("list shape again", cached, listed, stream=0x5000)
# CHECK-NEXT: list shape: cuCtxGetCurrent cuCtxGetDevice cuTensorMapEncodeTiledx4
# CHECK-NEXT: list shape again: cuCtxGetCurrent cuCtxGetDevice cuLaunchKernelEx;

# A remembered launch that fails is forgotten (its maps freed) and prepared
# anew by the next call.
bfake.fail = {"cuLaunchKernelEx": 1}
again("failing", cached, operands(), stream=0x5000)
print([e for e in bfake.log if not e.startswith("cuLaunchKernelEx")])
bfake.fail = {}
again("after the failure", cached, operands(), stream=0x5000)
# CHECK-NEXT: failing: CudaError: cuLaunchKernelEx failed: CUDA_ERROR_INVALID_VALUE (invalid argument) of gqa_causal_lse with grid [24, 1, 1], block [512, 1, 1], 197632 bytes of dynamic shared memory
# CHECK-NEXT: ['cuCtxGetCurrent()', 'cuMemFreeAsync(0x7e0000000000, 0x5000)']
# CHECK-NEXT: after the failure: cuCtxGetCurrent cuCtxGetDevice cuTensorMapEncodeTiledx4 {{.*}} params ['0x7e000000

# The bound: LAUNCH_CACHE_SIZE launches, least recently used forgotten first
# (its maps freed on its stream); a hit makes a launch the most recent.
cached.close()
cached.LAUNCH_CACHE_SIZE = 3
for label, stream in [("A", 0xA), ("B", 0xB), ("C", 0xC), ("A hit", 0xA), ("D", 0xD),
                      ("A hit again", 0xA), ("B again", 0xB)]:
    again(label, cached, operands(), stream=stream)
    print("  freed", [e.split("(")[1] for e in bfake.log if e.startswith("cuMemFreeAsync")],
          "remembered", len(cached._launches))
# CHECK: A: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}stream 0xa
# CHECK-NEXT: freed [] remembered 1
# CHECK-NEXT: B: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}stream 0xb
# CHECK-NEXT: freed [] remembered 2
# CHECK-NEXT: C: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}stream 0xc
# CHECK-NEXT: freed [] remembered 3
# CHECK-NEXT: A hit: cuCtxGetCurrent cuLaunchKernelEx; stream 0xa
# CHECK-NEXT: freed [] remembered 3
# CHECK-NEXT: D: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}stream 0xd
# CHECK-NEXT: freed ['0x{{[0-9a-f]+}}, 0xb)'] remembered 3
# CHECK-NEXT: A hit again: cuCtxGetCurrent cuLaunchKernelEx; stream 0xa
# CHECK-NEXT: freed [] remembered 3
# CHECK-NEXT: B again: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}stream 0xb
# CHECK-NEXT: freed ['0x{{[0-9a-f]+}}, 0xc)'] remembered 3
runtime.set_driver(None)

# Nothing to compute: no module, no maps, no launch.
launch(runtime.Kernel.load(TMP / "gqa_causal_lse.json"), FakeCuda(),
       operands(query=(Q, (3, 0, 4, 64), "bf16"), output=(O, (3, 0, 4, 64), "bf16"),
                lse=(L, (3, 4, 0), "f32")))
# CHECK: launched, grid (0, 1, 1)
# CHECK-NOT: cuModuleLoadData
# CHECK: cuDeviceGetAttribute(97, 0)
# CHECK-NEXT: --

# A context already current (PyTorch's) is used as it is; another device's
# primary context is retained when asked for.
launch(runtime.Kernel.load(TMP / "mha_f16.json"), FakeCuda(current=(0xCAFE, 0)),
       {"query": (Q, (1, 300, 2, 64), "f16"), "key": (K, (1, 300, 2, 64), "f16"),
        "value": (V, (1, 300, 2, 64), "f16"), "output": (O, (1, 300, 2, 64), "f16")})
# CHECK: launched, grid (4, 1, 1)
# CHECK-NEXT: cuInit(0)
# CHECK-NEXT: cuCtxGetCurrent()
# CHECK-NEXT: cuCtxGetDevice()
# CHECK-NEXT: cuDeviceGetAttribute(75, 0)
# CHECK: cuLaunchKernelEx(grid (4, 1, 1), block (512, 1, 1), smem 197632, stream 0x0, attrs [], function 0x2000, params ['0x7e0000000000', '0x7e0000000080', '0x7e0000000100', '0x7e0000000180', 1, 300, 300, 0.1803368777036667], extra None)
launch(runtime.Kernel.load(TMP / "mha_f16.json"), FakeCuda(current=(0xCAFE, 0)),
       {"query": (Q, (1, 300, 2, 64), "f16"), "key": (K, (1, 300, 2, 64), "f16"),
        "value": (V, (1, 300, 2, 64), "f16"), "output": (O, (1, 300, 2, 64), "f16")},
       device=1)
# CHECK: launched, grid (4, 1, 1)
# CHECK-NEXT: cuInit(0)
# CHECK-NEXT: cuCtxGetCurrent()
# CHECK-NEXT: cuDeviceGet(1)
# CHECK-NEXT: cuCtxGetDevice()
# CHECK-NEXT: cuDevicePrimaryCtxRetain(1)
# CHECK-NEXT: cuCtxSetCurrent(0xc001)
# CHECK-NEXT: cuDeviceGetAttribute(75, 1)

# A cluster: one CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (4) attribute.
(TMP / "clustered.json").write_text(json.dumps(manifest("clustered", cluster=(2, 1, 1))))
(TMP / "clustered.ptx").write_text("// ptx\n.version 9.0\n")
launch(runtime.Kernel.load(TMP / "clustered.json"), FakeCuda(sms=23), operands())
# CHECK: launched, grid (22, 1, 1)
# CHECK: cuModuleLoadData(21 bytes b'// p')
# CHECK: cuLaunchKernelEx(grid (22, 1, 1), block (512, 1, 1), smem 197632, stream 0x0, attrs [(4, 2, 1, 1)],

# Errors: every call checked, with cuGetErrorName and cuGetErrorString.
launch(runtime.Kernel.load(TMP / "gqa_causal_lse.json"),
       FakeCuda(fail={"cuModuleLoadData": 209}), operands())
# CHECK: CudaError: cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for execution on the device) loading {{.*}}gqa_causal_lse.cubin
launch(runtime.Kernel.load(TMP / "gqa_causal_lse.json"),
       FakeCuda(fail={"cuLaunchKernelEx": 1}), operands())
# CHECK: CudaError: cuLaunchKernelEx failed: CUDA_ERROR_INVALID_VALUE (invalid argument) of gqa_causal_lse with grid [24, 1, 1], block [512, 1, 1], 197632 bytes of dynamic shared memory
# The tensor maps are freed after a failed launch too.
# CHECK: cuLaunchKernelEx(grid (24, 1, 1)
# CHECK-NEXT: cuMemFreeAsync(0x7e0000000000, 0x0)
launch(runtime.Kernel.load(TMP / "gqa_causal_lse.json"),
       FakeCuda(fail={"cuTensorMapEncodeTiled": 1}), operands())
# CHECK: CudaError: cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (invalid argument) for the tensor map of 'query' (dims [64, 4, 1000, 3], strides [128, 512, 512000] B, box [64, 2, 64, 1], address 0x7f1000000000)
launch(runtime.Kernel.load(TMP / "gqa_causal_lse.json"), FakeCuda(capability=(9, 0)), operands())
# CHECK: RuntimeError: kernel gqa_causal_lse is compiled for sm_100a (compute capability 10.0) but the device is sm_90a (9.0)
# CHECK-NOT: cuModuleLoadData
# CHECK: --
(TMP / "gqa_causal_lse.cubin").unlink()
launch(runtime.Kernel.load(TMP / "gqa_causal_lse.json"), FakeCuda(), operands())
# CHECK: FileNotFoundError: kernel gqa_causal_lse: neither {{.*}}gqa_causal_lse.cubin nor {{.*}}gqa_causal_lse.ptx exists
runtime.set_driver(None)

# --- cuda.h structures (sizes and offsets as gcc lays them out) ------------
C = runtime
print("CUlaunchConfig", ctypes.sizeof(C.CUlaunchConfig), C.CUlaunchConfig.sharedMemBytes.offset,
      C.CUlaunchConfig.hStream.offset, C.CUlaunchConfig.attrs.offset,
      C.CUlaunchConfig.numAttrs.offset)
print("CUlaunchAttribute", ctypes.sizeof(C.CUlaunchAttribute), C.CUlaunchAttribute.value.offset,
      "value", ctypes.sizeof(C.CUlaunchAttributeValue), ctypes.alignment(C.CUlaunchAttributeValue))
print("CUtensorMap", ctypes.sizeof(C.CUtensorMap))
# CHECK: CUlaunchConfig 56 24 32 40 48
# CHECK-NEXT: CUlaunchAttribute 72 8 value 64 8
# CHECK-NEXT: CUtensorMap 128

# --- attention sinks --------------------------------------------------------
# A kernel with sinks is chosen only for sinks (and the reverse); it takes a
# contiguous, aligned f32 [Hq] after LSE.
sinks = runtime.Kernel(manifest("sinks", sink=True))
print(sinks)
print("sink matches", sinks.matches(causal=True, sink=True), sinks.matches(causal=True, sink=False),
      gqa.matches(causal=True, sink=True), sinks.matches(causal=True))
print(sinks.mismatches(causal=True, sink=False))
S = 0x7f6000000000
print([f"{a.name}: {a.value:#x}" for a in sinks.arguments(
    operands(sink=(S, (4,), "f32"))) if a.kind == "pointer"])
# CHECK: <fa4 kernel sinks sm_100a bf16 heads 4/2 head_dim 64 causal True sink scale 0.125 lse True>
# CHECK-NEXT: sink matches True False False True
# CHECK-NEXT: ['sink is True, not False']
# CHECK-NEXT: ['lse: 0x7f5000000000', 'sink: 0x7f6000000000']
for label, ops in [("no sink", operands()),
                   ("sink heads", operands(sink=(S, (2,), "f32"))),
                   ("sink rank", operands(sink=(S, (1, 4), "f32"))),
                   ("sink element", operands(sink=(S, (4,), "bf16"))),
                   ("sink strided", operands(sink=(S, (4,), "f32", (2,)))),
                   ("sink address", operands(sink=(S + 2, (4,), "f32")))]:
    try:
        sinks.arguments(ops)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK: no sink: kernel sinks needs operand 'sink' (it was compiled with attention sinks)
# CHECK-NEXT: sink heads: sink: dimension 0 (heads_q) is 2, kernel sinks takes 4
# CHECK-NEXT: sink rank: sink: rank 2 (shape [1, 4]), kernel sinks takes rank 1
# CHECK-NEXT: sink element: sink: element bf16, kernel sinks takes f32
# CHECK-NEXT: sink strided: sink: must be contiguous, got strides [2]
# CHECK-NEXT: sink address: sink: address 0x7f6000000002 is not 4-byte aligned
bad = manifest("badsink", sink=True)
bad["operands"][-1]["shape"] = [4, 1]
try:
    runtime.Kernel(bad)
except runtime.ManifestError as err:
    print("bad sink manifest:", err)
# CHECK: bad sink manifest: operand 'sink' must have rank 1 ([heads_q]), got 2

# --- scale and softcap are arguments --------------------------------------
# scale_log2 = scale log2(e) and score_cap = softcap / scale from the call;
# None keeps the compiled values.
def floats(kernel, **call):
    return [(a.name, round(a.value, 6)) for a in kernel.arguments(operands(), **call)
            if a.kind == "f32"]


print("default", floats(gqa), "scale 0.5", floats(gqa, scale=0.5))
print("softcap", floats(windowed), floats(windowed, scale=0.25, softcap=50.0))
for label, call in [("zero scale", dict(scale=0.0)), ("nan scale", dict(scale=float("nan"))),
                    ("no softcap", dict(softcap=5.0)), ("huge", dict(scale=1e38 * 3))]:
    try:
        gqa.arguments(operands(), **call)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
for label, call in [("negative softcap", dict(softcap=-1.0)),
                    ("softcap overflow", dict(scale=1e-30, softcap=1e10))]:
    try:
        windowed.arguments(operands(), **call)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK: default [('scale_log2', 0.180337)] scale 0.5 [('scale_log2', 0.721348)]
# CHECK-NEXT: softcap [('scale_log2', 0.180337), ('score_cap', 240.0)] [('scale_log2', 0.360674), ('score_cap', 200.0)]
# CHECK-NEXT: zero scale: scale must be positive and finite, got 0.0
# CHECK-NEXT: nan scale: scale must be positive and finite, got nan
# CHECK-NEXT: no softcap: kernel gqa_causal_lse has no softcap
# CHECK-NEXT: huge: scale_log2 = 4.32809e+38 (scale 3e+38) overflows the kernel's f32 argument
# CHECK-NEXT: negative softcap: kernel w takes a positive, finite softcap, got -1.0
# CHECK-NEXT: softcap overflow: score_cap = 1e+40 (scale 1e-30, softcap 10000000000.0) overflows the kernel's f32 argument

# --- kernels with score and mask regions -----------------------------------
# Captures are operands capture0, ... of any rank and element, each a
# pointer then its dynamic sizes; a kernel with regions is never chosen for
# a problem without them.
regional = manifest("alibi", causal=True, lse=False)
regional["operands"] += [{"name": "capture0", "element": "f32", "shape": [4]},
                         {"name": "capture1", "element": "i32", "shape": [-1, -1]}]
regional["params"] += [{"kind": "pointer", "name": "capture0", "source": "capture0.data"},
                       {"kind": "pointer", "name": "capture1", "source": "capture1.data"},
                       {"kind": "i32", "name": "capture1_size1",
                        "source": "capture1.shape[1]"}]
regional["regions"] = ["score", "mask"]
regional = runtime.Kernel(regional)
print("captures", regional.captures, "regions", regional.regions)
print("plain problem:", regional.mismatches(dtype="bf16", heads_q=4, heads_kv=2,
                                              head_dim=64, causal=True, lse=False))
given = {name: (0x1000, shape, "bf16")
         for name, shape in [("query", (2, 300, 4, 64)), ("key", (2, 500, 2, 64)),
                             ("value", (2, 500, 2, 64)), ("output", (2, 300, 4, 64))]}
given["capture0"] = (0x2000, (4,), "f32")
given["capture1"] = (0x3000, (2, 500), "i32")
args = regional.arguments(given)
print("args", [(a.name, a.value) for a in args if a.name.startswith("capture")])
for label, change in [("missing", None), ("strided", (0x3000, (2, 500), "i32", (1000, 2))),
                      ("misaligned", (0x3002, (2, 500), "i32")),
                      ("wrong element", (0x3000, (2, 500), "f32"))]:
    call = dict(given)
    if change is None:
        del call["capture1"]
    else:
        call["capture1"] = change
    try:
        regional.arguments(call)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK: captures ['capture0', 'capture1'] regions ('score', 'mask')
# CHECK-NEXT: plain problem: ['it inlines score and mask regions']
# CHECK-NEXT: args [('capture0', 8192), ('capture1', 12288), ('capture1_size1', 500)]
# CHECK-NEXT: missing: kernel alibi needs operand 'capture1' (a tensor its score or mask regions read)
# CHECK-NEXT: strided: capture1: must be contiguous, got strides [1000, 2]
# CHECK-NEXT: misaligned: capture1: address 0x3002 is not 4-byte aligned
# CHECK-NEXT: wrong element: capture1: element f32, kernel alibi takes i32
