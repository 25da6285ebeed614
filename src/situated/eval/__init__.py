"""Metrics, evaluation runners and reports."""
