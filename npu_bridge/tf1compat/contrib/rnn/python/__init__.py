"""TF 1.15's deep module path of contrib.rnn, which ported seq2seq and NAS scripts import directly."""
