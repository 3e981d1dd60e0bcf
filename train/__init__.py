"""coworkenv.train"""
