"""Grasp planning: the planner, its proposal backends, collision checking and Isaac-Grasp files.

Pure of ``pxr`` except where a module reads a stage through :mod:`usdgrip.usd`;
``physics/`` evaluates grasps in MuJoCo (pure: numpy, scipy, mujoco, coacd).
"""
