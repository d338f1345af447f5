"""Summariser backends: extractive (offline, default), openai (any OpenAI-compatible endpoint), replay."""
