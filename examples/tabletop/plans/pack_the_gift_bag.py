def pack_the_gift_bag():
	objects = ['ball', 'candy', 'cube', 'duck', 'gift_bag', 'toy_car', 'tray']
	# 0: the sweets go in the gift bag
	grab_and_putin('candy', 'gift_bag')
	# 1: the toys go in the tray
	grab_and_putin('duck', 'tray')
	grab_and_putin('toy_car', 'tray')
	grab_and_putin('ball', 'tray')
