"""Placeholder: datasets page (being written)."""

import streamlit as st

st.title("datasets")
