"""coworkenv.synth"""
