"""Facts shared by several modules, stated once."""

#: Gravity used by inverse dynamics: 9.81 m/s^2 along -z of the URDF root frame.
GRAVITY = (0.0, 0.0, -9.81)
