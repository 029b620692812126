"""Placeholder: corpus page (being written)."""

import streamlit as st

st.title("corpus")
