"""SpecDec Studio's engine: exact sampling maths, models, speculative decoding, figures.

Never imports streamlit; every function takes and returns plain data.
"""
