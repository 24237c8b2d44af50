"""Patches of other libraries' attributes that gpuidle can undo: the automatic marks of
gpuidle/_torch.py (DataLoader, optimizer steps, syncs) and gpuidle/_serving.py (http.server,
transformers' generate()). Undone last first; one replaced since by someone else is left alone."""

from __future__ import annotations

from typing import Any, Callable

_INHERITED = object()  # the patched attribute came from a base class: undo deletes ours


class Patches:
    def __init__(self) -> None:
        self._done: list[tuple[Any, str, Any, Any]] = []  # (owner, name, original, wrapper)

    def __len__(self) -> int:
        return len(self._done)

    def apply(self, owner: Any, name: str, make_wrapper: Callable[[Any], Any],
              required: bool = False) -> None:
        """Replaces owner.name with make_wrapper(the original). A missing attribute is skipped,
        or, with `required`, raises AttributeError (the caller warns)."""
        original = getattr(owner, name) if required else getattr(owner, name, None)
        if original is None:
            return
        own = owner.__dict__.get(name, _INHERITED) if hasattr(owner, "__dict__") else original
        wrapper = make_wrapper(original)
        setattr(owner, name, wrapper)
        self._done.append((owner, name, own, wrapper))

    def applied(self, owner: Any, name: str) -> bool:
        return any(o is owner and n == name for o, n, _, _ in self._done)

    def undo(self, keep: int = 0) -> None:
        """Undoes the patches applied after the first `keep` of them."""
        while len(self._done) > keep:
            owner, name, original, wrapper = self._done.pop()
            if getattr(owner, name, None) is not wrapper:  # someone else patched it since
                continue
            if original is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
