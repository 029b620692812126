"""Placeholder: runs page (being written)."""

import streamlit as st

st.title("runs")
