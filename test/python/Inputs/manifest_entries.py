"""Manifest entries of the tables a kernel reads through pointers, as
fa4-compile writes them, for the test layers that build manifests by hand
(manifests.py, torch_standin.py)."""


def add_table(operands, params, name, shape, element="i32"):
    """An operand read through a pointer parameter of the same name."""
    operands.append({"name": name, "element": element, "shape": shape})
    params.append({"kind": "pointer", "name": name, "source": f"{name}.data"})


def add_page_table(operands, params):
    """The page table [B, max_pages] and its row length."""
    add_table(operands, params, "page_table", [-1, -1])
    params.append({"kind": "i32", "name": "max_pages", "source": "page_table.shape[1]"})


def add_rope(operands, params, columns, positions_shape):
    """The rotary table [rows, columns] f32, its row count and the positions."""
    add_table(operands, params, "cos_sin", [-1, columns], element="f32")
    params.append({"kind": "i32", "name": "rope_positions", "source": "cos_sin.shape[0]"})
    add_table(operands, params, "positions", positions_shape)
