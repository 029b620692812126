"""Sentence splitting and the sentence-key scheme shared by every judge and metric."""
