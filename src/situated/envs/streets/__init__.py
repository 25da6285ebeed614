"""Touchdown / Map2seq street graphs with VELMA's transition rules."""
