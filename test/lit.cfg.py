# -*- Python -*-
# lit configuration of the fa4 test suite.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FA4"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".c", ".py", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "lit.local.cfg"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fa4_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fa4_src_root", config.fa4_src_root))
config.substitutions.append(("%fa4_lib_dir", config.fa4_lib_dir))
config.substitutions.append(("%fa4_obj_root", config.fa4_obj_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.fa4_tools_dir, append_path=True)

# pytest and the tests' imports need Debian's interpreter, not a pyenv one
# earlier on PATH.
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
config.substitutions.append(("%python", python))
config.environment["PYTHONPATH"] = os.path.join(config.fa4_src_root, "python")
config.environment["FA4_CAPI_LIB"] = os.path.join(config.fa4_lib_dir, "libFA4CAPI.so")

tools = ["fa4-opt", "fa4-sim", ToolSubst("fa4-capi-test", unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, [config.fa4_tools_dir, config.llvm_tools_dir])

if config.fa4_has_capi:
    config.available_features.add("capi")
# Upstream mlir-opt loading fa4 as a plugin (the shared-library build only).
mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
plugin = os.path.join(config.fa4_lib_dir, "FA4Plugin.so")
if config.fa4_has_capi and os.path.exists(mlir_opt) and os.path.exists(plugin):
    config.available_features.add("mlir-opt-plugin")
    config.substitutions.append(("%mlir_opt", mlir_opt))
    config.substitutions.append(("%fa4_plugin", plugin))
if config.fa4_cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", config.fa4_cuobjdump))
if config.fa4_ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.fa4_ptxas))
    config.substitutions.append(("%cuda_toolkit", config.fa4_cuda_toolkit))
