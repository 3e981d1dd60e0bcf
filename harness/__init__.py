"""coworkenv.harness"""
