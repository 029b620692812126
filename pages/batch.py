"""Placeholder: batch page (being written)."""

import streamlit as st

st.title("batch")
