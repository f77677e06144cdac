// One client's counts (account.hpp).
#include "account.hpp"

namespace rigd {

Account::~Account() { users_.give_all(user_, held_); }

}  // namespace rigd
