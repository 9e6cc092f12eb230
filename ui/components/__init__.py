"""Reusable dashboard pieces; each owns its st.session_state keys and returns plain values."""
