"""Pure kubelet policies: data in, decision out, no I/O."""
