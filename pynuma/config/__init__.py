"""Configuration files pynuma reads: the KubeletConfiguration subset it understands."""
