"""Placeholder: ask page (being written)."""

import streamlit as st

st.title("ask")
