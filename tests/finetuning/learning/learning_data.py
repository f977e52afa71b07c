"""What the learning tests share besides fixtures: their word list and a fresh compact encoder."""

from task_fixtures import compact_encoder

WORDS = ("house river green table music paper window garden yellow friend morning winter doctor "
         "letter bridge market silver forest dinner coffee travel summer school planet story horse "
         "mountain kitchen station orange camera pencil island castle rabbit bottle").split()


def fresh_encoder(config_and_weights, vocabulary):
    config, weights = config_and_weights
    return compact_encoder(config, weights, vocabulary)
