"""TF 1.15's deep module path of contrib.learn, for the datasets helpers ported input pipelines import."""
