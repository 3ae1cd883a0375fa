"""Simulation in virtual time: timing profiles, the simulator, seed sweeps and where they run,
shrinking, re-timing of untimed runs and the determinism audit."""
