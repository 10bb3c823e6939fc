"""Viam datasets: binary (`--to viam-binary`) and sequence (`--to viam-sequence`), as `viam dataset export` writes."""
