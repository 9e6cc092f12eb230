"""The lab twin of a deployment: plan it (``plan``: pure), reproduce its symptom and verify each fix on it
(``reproduce``: starts and stops real lab servers), verify on the real server after a fix (``verify``).

A layer of its own between the faces and the cores: it composes the lab, the probes and the catalogue, and
yields run events like every core (the Recorder, an observer, is the only writer).
"""
