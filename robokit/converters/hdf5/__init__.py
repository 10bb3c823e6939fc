"""HDF5 demonstration files (robomimic / Isaac Lab Mimic, LIBERO, ALOHA / ACT): read only, see `reader`."""
