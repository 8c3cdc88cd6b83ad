"""Test helpers shared across test folders (fake servers, builders)."""
