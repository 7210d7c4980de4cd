// libyaml, the reference C YAML parser (Debian: libyaml-dev, pkg-config yaml-0.1).
#include <yaml.h>
