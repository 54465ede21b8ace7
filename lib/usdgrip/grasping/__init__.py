"""Grasp planning and evaluation."""
