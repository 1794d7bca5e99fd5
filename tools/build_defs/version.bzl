"""cartplan's release version and the SONAME of libcartplan.so (install.sh reads both from here)."""

CARTPLAN_VERSION = "0.1.0"

# The ABI version: bump it whenever an exported symbol changes incompatibly.
CARTPLAN_SOVERSION = "0"
