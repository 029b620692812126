"""Placeholder: compare page (being written)."""

import streamlit as st

st.title("compare")
